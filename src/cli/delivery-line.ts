// The terminal's line for a capture, one rendering for listen's line of each delivery and `captures list`, and
// listen's `--json` line: what each part says and its colour come from the story (src/story/), never decided here.
import type { DeliveryReport } from '../listener/index.js';
import { reportOf } from '../listener/report.js';
import type { Capture } from '../store/index.js';
import {
  answerOutcome,
  type CaptureStory,
  kindTone,
  outcomeTone,
  signatureTone,
  statusOf,
  statusShown,
} from '../story/index.js';
import { PAINT } from './output.js';

/** What a line says of a capture: a delivery's report, or a stored capture seen as one (a status may be unknown yet). */
export type LineFacts = Omit<DeliveryReport, 'status'> & { status: number | null };

function signatureText(facts: LineFacts): string {
  const reason = facts.signatureReason ? ` (${facts.signatureReason})` : '';
  return PAINT[signatureTone(facts.signature)](`signature ${facts.signature}${reason}`);
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
  return PAINT[outcomeTone(outcome)](`[${statusShown(status, { cut, pending })}]`);
}

/** The status shown, in the tone of its outcome, as the story judged it (a request not captured: refused). */
function statusText(facts: LineFacts): string {
  if (facts.story) return PAINT[facts.story.tone](`[${facts.story.status}]`);
  return statusWords(facts.status, { refused: true });
}

/** The app's time, as the record has it (measured once, by the forward); a request not captured: its own. */
function durationText(facts: LineFacts): string {
  const ms = facts.story ? facts.story.durationMs : facts.durationMs;
  return ms === null ? '' : ` (${ms} ms)`;
}

/** What a capture was, before the arrow; nothing for a first delivery, the usual case. */
function kindText(story: CaptureStory | null): string {
  if (!story || story.kind === 'first') return '';
  return ` ${PAINT[kindTone(story.kind)](story.words)}`;
}

/** The event's state after its newest capture, when it is not simply delivered. */
function stateText(story: CaptureStory | null): string {
  if (!story?.event.latest || story.event.state === 'delivered') return '';
  return `  ${PAINT[story.event.tone](story.event.words)}`;
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
  const time = PAINT.plain(at.toTimeString().slice(0, 8));
  const target = facts.target ?? (facts.route === null ? 'clockhook (no route)' : 'clockhook');
  const status = statusText(facts);
  const duration = durationText(facts);
  const error = facts.error ? PAINT.bad(` ${facts.error}`) : '';
  // Refused before its body was read (listener_busy): there is no verdict and no capture to name.
  if (facts.captureId === null)
    return `${time}${facts.source === 'replay' ? PAINT.info(' replay') : ''} --> ${facts.method} (not captured)  <-- ${status} ${target}${duration}${error}`;
  const what = facts.type ? `${facts.type} [${facts.eventId}]` : `${facts.method} (not an envelope)`;
  const waited = facts.waitedMs ? PAINT.plain(` held ${Math.round(facts.waitedMs / 100) / 10} s for the app`) : '';
  const injected = facts.injected ? PAINT.warn(` injected: ${facts.injected.join(', ')}`) : '';
  const said = facts.story?.answer ?? facts.answer;
  const answer = said ? PAINT.plain(` ${JSON.stringify(said)}`) : '';
  const shownId = id ? `  ${facts.captureId}` : '';
  return `${time}${kindText(facts.story)} --> ${what} ${signatureText(facts)}  <-- ${status} ${facts.method} ${target}${duration}${waited}${error}${injected}${answer}${shownId}${stateText(facts.story)}`;
}

/** A stored capture as a line's facts, with its story as the store tells it: the report listen gave of it. */
export function captureFacts(capture: Capture, story: CaptureStory): LineFacts {
  const { forward } = capture;
  const status = statusOf(capture);
  const error = capture.rejected?.code ?? forward?.error;
  const { target, waitedMs, cut } = forward ?? {};
  const outcome = { status: status ?? 0, durationMs: story.durationMs ?? 0, error, target, waitedMs, cut };
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
