// One row of the list: cells in fixed columns (status, time, event type, event id, duration, marks), so that
// every row's cells line up under the column header whatever marks a row carries, and nothing is cut.
import { deliveryStoryOf, eventStoryOf, storyLabel } from './story.js';
import { el } from './render.js';
import { signatureTone, verdictOf } from './shared/verdict.js';
import { state } from './state.js';
import { select } from './selection.js';
import { openTab } from './tabs.js';

/** A row's mark for a signature that is not valid, in the tone clockhook gives it; none for a valid one. */
export function signatureBadge(signature) {
  const tone = signatureTone(signature.status);
  switch (signature.status) {
    case 'valid':
      return null;
    case 'missing':
      return el('span', { class: `badge ${tone}` }, 'signature missing');
    case 'invalid':
      return el('span', { class: `badge ${tone}`, title: signature.hint ?? '' }, `invalid: ${signature.reason ?? '?'}`);
    default:
      return el('span', { class: `badge ${tone}` }, 'unchecked');
  }
}

/**
 * The status shown, first in the row, in the tone of its outcome, both as clockhook judges them on every
 * surface (src/shared/verdict.ts): taken green, failed red (an error status, no answer, an answer cut short),
 * refused by clockhook itself grey, still with the app a hollow chip.
 */
export function statusChip(capture) {
  const verdict = verdictOf(capture);
  const tone = verdict.outcome === 'pending' ? 'wait' : verdict.tone;
  const title = capture.rejected
    ? `refused by clockhook: ${capture.rejected.code}`
    : capture.filtered
      ? `taken out by --filter ${capture.filtered}: answered 200, not forwarded`
      : capture.forward === null
        ? 'captured only'
        : (capture.forward?.error ?? (capture.forward ? '' : 'forwarding…'));
  return el('span', { class: `chip ${tone}`, title }, verdict.status);
}

const durationOf = (capture) => {
  const { durationMs } = verdictOf(capture);
  return durationMs === null ? '' : `${durationMs} ms`;
};

/** When a capture came: its time, with its day when that is not today (the store outlives a day). */
// The formats of toLocaleTimeString(), toLocaleString() and a short day, made once: each of those calls
// makes a formatter anew, which took most of the time of drawing a list of 200 rows.
const TIME = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', second: '2-digit' });
const FULL = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  second: '2-digit',
});
const DAY = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

export function receivedLabel(receivedAt) {
  const at = new Date(receivedAt);
  const time = TIME.format(at);
  const today = at.toDateString() === new Date().toDateString();
  return el('span', { class: 'time', title: FULL.format(at) }, today ? time : `${DAY.format(at)}, ${time}`);
}

/** What a capture was (by request): retry n, duplicate, replay, edited replay; nothing for a first delivery. */
function kindBadge(capture) {
  const label = storyLabel(capture);
  if (!label) return null;
  return el('span', { class: `badge ${deliveryStoryOf(capture).tone}` }, label);
}

/** An event's state (by event) when it is not simply delivered: failing, given up, disabled, with the app. */
function stateBadge(capture) {
  const story = eventStoryOf(capture);
  if (!story || story.state === 'delivered' || story.latest !== capture.id) return null;
  return el('span', { class: `badge ${story.tone}`, title: story.words }, story.state.replace('-', ' '));
}

/**
 * An event id shortened in the middle where its column is too narrow, `evt_5c48…9f1a`: its head is cut with
 * an ellipsis, its last four characters stay. The text is the whole id (for search, copy and screen
 * readers), and so is its title.
 */
function idCell(eventId) {
  if (!eventId) return el('span', { class: 'id mono' }, '(no event id)');
  return el(
    'span',
    { class: 'id mono', title: eventId },
    el('span', { class: 'id-head' }, eventId.slice(0, -4)),
    el('span', { class: 'id-tail' }, eventId.slice(-4)),
  );
}

/** Method and path, as a mark, only when they are not the listener's usual POST to its path. */
function requestBadge(capture) {
  const base = state.listener ? new URL(state.listener).pathname : '/';
  if (capture.method === 'POST' && capture.path === base) return null;
  return el('span', { class: 'badge plain mono' }, `${capture.method} ${capture.path}`);
}

/** The exceptional only: a signature not valid, how many captures (by event), what it was or its event's state. */
function marksOf(capture, count) {
  const marks = [signatureBadge(capture.signature), requestBadge(capture)];
  if (count > 1)
    marks.push(el('span', { class: 'badge plain', title: 'captures of this event' }, `${count} deliveries`));
  marks.push(state.view === 'event' ? stateBadge(capture) : kindBadge(capture));
  const problems = capture.contractProblems;
  if (problems.length > 0) {
    const title = problems.map((p) => `${p.field}: ${p.message}`).join('\n');
    const words = `${problems.length} contract problem${problems.length > 1 ? 's' : ''}`;
    marks.push(el('span', { class: 'badge warn', title }, words));
  }
  if (capture.injected) {
    const title = 'a fault injected on purpose by listen --faults';
    marks.push(el('span', { class: 'badge warn', title }, `injected: ${capture.injected.join(', ')}`));
  }
  if (capture.drift) {
    // Its data came shaped otherwise than the earlier deliveries of its type (see ShapeBook).
    const title = `shaped otherwise than the earlier ${capture.envelope?.type} deliveries:\n${capture.drift.join('\n')}`;
    marks.push(el('span', { class: 'badge warn drift', title }, 'shape changed'));
  }
  if (capture.pinned) marks.push(el('span', { class: 'badge plain' }, 'pinned'));
  return marks.filter(Boolean);
}

/** One row: status, time, event type, event id, duration, marks, each in its column. */
export function captureRow(capture, count) {
  return el(
    'li',
    {
      class: `capture${capture.id === state.selected ? ' selected' : ''}`,
      'data-id': capture.id,
      onclick: () => {
        select(capture.id);
        // An event opens on its story: its deliveries in order, and the service's attempts.
        if (state.view === 'event' && capture.envelope?.id) openTab('attempts');
      },
    },
    el('span', { class: 'status' }, statusChip(capture)),
    receivedLabel(capture.receivedAt),
    el('span', { class: 'type' }, capture.envelope?.type || '(no type)'),
    idCell(capture.envelope?.id),
    el('span', { class: 'duration' }, durationOf(capture)),
    el('span', { class: 'markers' }, marksOf(capture, count)),
  );
}
