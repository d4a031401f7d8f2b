// listen's line for each delivery, for people and as its `--json` line: the same report, two renderings.
import type { DeliveryReport } from '../listener/index.js';
import { colour } from './output.js';

const time = () => new Date().toTimeString().slice(0, 8);

function signatureText(report: DeliveryReport): string {
  switch (report.signature) {
    case 'valid':
      return colour.green('signature valid');
    case 'unchecked':
      return colour.yellow('signature unchecked');
    default:
      return colour.red(`signature ${report.signature}${report.signatureReason ? ` (${report.signatureReason})` : ''}`);
  }
}

/**
 * One line per delivery: time, `-->` type [event id] what it was, verdict, `<--` [status] METHOD target
 * (ms). What it was (src/story/) is said unless it is a first delivery: `retry 2` (the app had not taken
 * the event yet), `duplicate (the app had taken it)` (the moment a handler must deduplicate), `replay`,
 * `edited replay`.
 */
export function deliveryLine(report: DeliveryReport): string {
  const status = report.status < 300 ? colour.green(`[${report.status}]`) : colour.red(`[${report.status}]`);
  const target = report.target ?? (report.route === null ? 'clockhook (no route)' : 'clockhook');
  const error = report.error ? colour.red(` ${report.error}`) : '';
  const answer = report.answer ? colour.grey(` ${JSON.stringify(report.answer)}`) : '';
  const injected = report.injected ? colour.yellow(` injected: ${report.injected.join(', ')}`) : '';
  const waited = report.waitedMs ? colour.grey(` held ${Math.round(report.waitedMs / 100) / 10} s for the app`) : '';
  // Refused before its body was read (listener_busy): there is no verdict and no capture to name.
  if (report.captureId === null)
    return `${colour.grey(time())}${report.source === 'replay' ? colour.cyan(' replay') : ''} --> ${report.method} (not captured)  <-- ${status} ${target} (${report.durationMs} ms)${error}`;
  const what = report.type ? `${report.type} [${report.eventId}]` : `${report.method} (not an envelope)`;
  return `${colour.grey(time())}${kindText(report.story)} --> ${what} ${signatureText(report)}  <-- ${status} ${report.method} ${target} (${report.durationMs} ms)${waited}${error}${injected}${answer}`;
}

/** What a capture was, before the arrow; nothing for a first delivery, the usual case. */
function kindText(story: DeliveryReport['story']): string {
  if (!story || story.kind === 'first') return '';
  const paint = story.kind === 'duplicate' ? colour.yellow : story.kind === 'retry' ? colour.grey : colour.cyan;
  return ` ${paint(story.words)}`;
}

/** A delivery's `--json` line: the report's fields, those without a value left out. */
export function deliveryJson(report: DeliveryReport): Record<string, unknown> {
  const { captureId, eventId, type, signature, status, durationMs, error, answer, source } = report;
  const { signatureReason, duplicateOf } = report;
  return {
    event: 'delivery',
    captureId,
    eventId,
    type,
    signature,
    ...(signatureReason ? { signatureReason } : {}),
    ...(duplicateOf ? { duplicateOf } : {}),
    status,
    durationMs,
    source,
    ...(report.story ? { story: report.story } : {}),
    ...(error ? { error } : {}),
    ...(answer ? { answer } : {}),
    ...(report.route !== undefined ? { route: report.route } : {}),
    ...(report.injected ? { injected: report.injected } : {}),
    ...(report.waitedMs ? { waitedMs: report.waitedMs } : {}),
  };
}
