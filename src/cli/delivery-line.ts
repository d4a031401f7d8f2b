// The terminal's line for a capture, one rendering for listen's line of each delivery and `captures list`, and
// listen's `--json` line: what each part says and its colour come from the story (src/story/), never decided here.
import { answerExcerpt } from '../shared/excerpt.js';
import type { DeliveryReport } from '../listener/index.js';
import { reportOf } from '../listener/report.js';
import type { Capture } from '../store/index.js';
import {
  answerOutcome,
  type CaptureStory,
  kindTone,
  outcomeTone,
  stateTone,
  statusOf,
  type Tone,
} from '../story/index.js';
import { colour } from './output.js';

/** How the terminal paints a tone of the story. */
const PAINT: Record<Tone, (text: string) => string> = {
  ok: colour.green,
  bad: colour.red,
  warn: colour.yellow,
  info: colour.cyan,
  plain: colour.grey,
};

/** What a line says of a capture: a delivery's report, or a stored capture seen as one (a status may be unknown yet). */
export type LineFacts = Omit<DeliveryReport, 'status'> & { status: number | null };

function signatureText(facts: LineFacts): string {
  switch (facts.signature) {
    case 'valid':
      return colour.green('signature valid');
    case 'unchecked':
      return colour.yellow('signature unchecked');
    default:
      return colour.red(`signature ${facts.signature}${facts.signatureReason ? ` (${facts.signatureReason})` : ''}`);
  }
}

/**
 * A status in brackets (`[200]`, `[502 cut]`, `[no answer]`) in the colour of its outcome (see answerOutcome):
 * listen's line, `replay` and `replay --scenario` paint an answer alike. `pending`: the app may still answer.
 */
export function statusWords(
  status: number | null,
  { cut = false, refused = false, pending = false }: { cut?: boolean; refused?: boolean; pending?: boolean } = {},
): string {
  const outcome = pending ? 'pending' : answerOutcome(status, { cut, refused });
  return PAINT[outcomeTone(outcome)](`[${status ?? 'no answer'}${cut ? ' cut' : ''}]`);
}

/** The status the sender got, `cut` when the app's answer was cut short, in the colour of its outcome. */
function statusText(facts: LineFacts): string {
  // clockhook answered it itself (no target) with anything but a 2xx: a refused signature, a full budget.
  const refused = facts.target === null && facts.status !== null && answerOutcome(facts.status) !== '2xx';
  return statusWords(facts.status, { cut: facts.cut, refused, pending: facts.status === null });
}

/** What a capture was, before the arrow; nothing for a first delivery, the usual case. */
function kindText(story: CaptureStory | null): string {
  if (!story || story.kind === 'first') return '';
  return ` ${PAINT[kindTone(story.kind)](story.words)}`;
}

/** The event's state after its newest capture, when it is not simply delivered. */
function stateText(story: CaptureStory | null): string {
  if (!story?.event.latest || story.event.state === 'delivered') return '';
  return `  ${PAINT[stateTone(story.event.state)](story.event.words)}`;
}

/**
 * One line per capture: time, what it was (`retry 2`, `duplicate (the app had taken it)`, `replay`; nothing
 * for a first delivery), `-->` type [event id], verdict, `<--` [status] METHOD target (ms), what was held or
 * injected, what the app said when it did not take it; with `id`, the capture's id; last, the event's state
 * when its newest capture left it not delivered.
 */
export function deliveryLine(
  facts: LineFacts,
  { id = false, at = new Date() }: { id?: boolean; at?: Date } = {},
): string {
  const time = colour.grey(at.toTimeString().slice(0, 8));
  const target = facts.target ?? (facts.route === null ? 'clockhook (no route)' : 'clockhook');
  const status = statusText(facts);
  const duration = facts.status === null && !facts.target ? '' : ` (${facts.durationMs} ms)`;
  const error = facts.error ? colour.red(` ${facts.error}`) : '';
  // Refused before its body was read (listener_busy): there is no verdict and no capture to name.
  if (facts.captureId === null)
    return `${time}${facts.source === 'replay' ? colour.cyan(' replay') : ''} --> ${facts.method} (not captured)  <-- ${status} ${target}${duration}${error}`;
  const what = facts.type ? `${facts.type} [${facts.eventId}]` : `${facts.method} (not an envelope)`;
  const waited = facts.waitedMs ? colour.grey(` held ${Math.round(facts.waitedMs / 100) / 10} s for the app`) : '';
  const injected = facts.injected ? colour.yellow(` injected: ${facts.injected.join(', ')}`) : '';
  const answer = facts.answer ? colour.grey(` ${JSON.stringify(facts.answer)}`) : '';
  const shownId = id ? `  ${facts.captureId}` : '';
  return `${time}${kindText(facts.story)} --> ${what} ${signatureText(facts)}  <-- ${status} ${facts.method} ${target}${duration}${waited}${error}${injected}${answer}${shownId}${stateText(facts.story)}`;
}

/** A stored capture as a line's facts, with its story as the store tells it: the report listen gave of it. */
export function captureFacts(capture: Capture, story: CaptureStory): LineFacts {
  const { forward } = capture;
  const status = statusOf(capture);
  const answer = forward && answerOutcome(status, { cut: forward.cut }) !== '2xx' ? answerExcerpt(forward) : null;
  const error = capture.rejected?.code ?? forward?.error;
  const { durationMs = 0, target, waitedMs, cut } = forward ?? {};
  const outcome = { status: status ?? 0, durationMs, error, target, answer, waitedMs, cut };
  return Object.assign(reportOf(capture, outcome, story), { status });
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
    ...(report.cut ? { cut: true } : {}),
  };
}
