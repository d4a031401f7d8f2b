// The service's delivery attempts of an event: asked for when shown, and again until the answered deliveries are
// listed; and the detail's section that shows them, with what the service does next.
import { answered, errorText, heldCapture, heldCaptures, scheduleRender, serviceEvent, state } from './state.js';
import { act } from './connection.js';
import { el } from './render.js';

export async function loadAttempts(eventId) {
  const result = await act({ type: 'attempts', eventId });
  const record = result.ok ? result.data : { error: result.error };
  state.attempts.set(eventId, record);
  scheduleRender({ detail: true });
  return record;
}

/**
 * The service must list at least one attempt for each delivery of the event that the page holds and that was
 * answered (it may list more: to other endpoints, or deliveries retention dropped). A replay is not the
 * service's doing.
 */
export function deliveriesAnswered(eventId) {
  let count = 0;
  for (const capture of heldCaptures()) {
    if (capture.source === 'delivery' && capture.envelope?.id === eventId && answered(capture)) count++;
  }
  return count;
}

/**
 * A delivery of an event has been answered, so the service is about to list one more attempt of it. The
 * attempts shown for it are asked for again until they are there; those of an event not shown are
 * forgotten, and asked for when it is selected.
 */
export function deliveryAnswered(capture) {
  const eventId = capture.envelope?.id;
  if (capture.source !== 'delivery' || !eventId || !state.attempts.has(eventId)) return;
  if (heldCapture(state.selected)?.envelope?.id === eventId) awaitAttempts(eventId);
  else state.attempts.delete(eventId);
}

/** Watches the event's attempts when the service lists fewer than the answered deliveries the page holds. */
export function awaitAttempts(eventId) {
  const count = deliveriesAnswered(eventId);
  const record = state.attempts.get(eventId);
  if (record && !record.error && record.delivery_attempts.length < count) watchAttempts(eventId, count);
}

/**
 * The service lists an attempt only once it is complete, a moment after the delivery was answered. So the
 * page asks for the event's attempts 0.5, 1, 2, 4 and 8 s later, until it lists `count` of them or asking
 * fails; Refresh is there for anything slower. One watch per event: a second one raises its count.
 */
export async function watchAttempts(eventId, count) {
  const watched = state.awaitedAttempts.has(eventId);
  state.awaitedAttempts.set(eventId, Math.max(count, state.awaitedAttempts.get(eventId) ?? 0));
  if (watched) return;
  try {
    for (const waitMs of [500, 1000, 2000, 4000, 8000]) {
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      const record = await loadAttempts(eventId);
      if (record.error || record.delivery_attempts.length >= state.awaitedAttempts.get(eventId)) return;
    }
  } finally {
    state.awaitedAttempts.delete(eventId);
  }
}

/** The detail's section of the service's attempts of the capture's event, and what it does next. */
export function attemptsSection(capture) {
  const eventId = capture.envelope?.id;
  if (!eventId) return el('p', { class: 'muted' }, 'Not an event envelope.');
  if (!serviceEvent(capture))
    return el(
      'p',
      { class: 'muted' },
      'Not signed by the service (sent by hand?): the service knows no such event, so it has no attempts to show and none to redeliver.',
    );
  if (state.mode === 'offline') return el('p', { class: 'muted' }, 'Offline: no API to ask.');
  const record = state.attempts.get(eventId);
  if (!record) return el('p', { class: 'muted' }, 'Loading…');
  if (record.error) return el('div', {}, el('div', { class: 'result error' }, errorText(record.error)));
  renderAgainWhenDue(record.outlook);
  // Numbered in the order the service lists them: a redelivery's attempts start again at 1 per delivery.
  // The API client has read the fields whatever the service names them (see normalizeAttempt).
  const rows = record.delivery_attempts.map((a, i) => {
    const status = a.statusCode === null ? '–' : el('span', { class: a.taken ? 'ok-text' : 'bad-text' }, a.statusCode);
    const at = a.createdAt ? new Date(a.createdAt) : null;
    return el(
      'tr',
      {},
      // data-label: each cell's heading, shown beside it where the table turns into cards (narrow windows).
      el('td', { 'data-label': '#' }, i + 1),
      el('td', { 'data-label': 'Endpoint' }, a.endpointId === undefined ? '–' : `#${a.endpointId}`),
      el('td', { 'data-label': 'Status' }, status),
      el('td', { 'data-label': 'Duration' }, a.durationMs === undefined ? '–' : `${a.durationMs} ms`),
      el('td', { 'data-label': 'At' }, at && !Number.isNaN(at.getTime()) ? at.toLocaleTimeString() : '–'),
      el(
        'td',
        { class: 'answer', 'data-label': 'Answer' },
        a.error ? el('div', { class: 'bad-text' }, a.error) : null,
        a.responseBody ? answerPreview(a.responseBody) : null,
      ),
    );
  });
  return el(
    'div',
    {},
    rows.length === 0
      ? el('p', { class: 'muted' }, 'No completed attempts yet (the service lists an attempt once it is complete).')
      : el(
          'table',
          { class: 'attempts' },
          el(
            'tr',
            {},
            ['#', 'Endpoint', 'Status', 'Duration', 'At', 'Answer'].map((h) => el('th', {}, h)),
          ),
          rows,
        ),
    (record.outlook ?? []).map((o) => el('p', { class: 'outlook' }, outlookText(o))),
  );
}

let dueTimer = 0;

/** The detail is drawn again: the attempts shown, if any, say again when they fall due. */
export function forgetDue() {
  clearTimeout(dueTimer);
}

/** Shows the detail again when the soonest attempt it says "is due" falls due, to say "was due" from then on. */
function renderAgainWhenDue(outlook) {
  clearTimeout(dueTimer);
  const now = Date.now();
  const soonest = Math.min(...(outlook ?? []).filter((o) => o.next !== 'none' && o.dueAt > now).map((o) => o.dueAt));
  // setTimeout takes at most 2^31 - 1 ms (~24.8 days); a later due time is looked at again after that.
  if (Number.isFinite(soonest))
    dueTimer = setTimeout(() => scheduleRender({ detail: true }), Math.min(soonest - now, 2 ** 31 - 1));
}

/**
 * What comes next for an endpoint whose latest attempt failed, in the story's words (the server says them:
 * see outlookWords), with the time put in as this page's clock reads it, and what the page can do about it.
 */
function outlookText(o) {
  const now = Date.now();
  const dueAt = o.next === 'attempt' ? o.dueAt : null;
  const text = dueAt !== null && dueAt <= now && o.words.due ? o.words.due : o.words.text;
  const said = dueAt === null ? text : text.replace('{at}', new Date(dueAt).toLocaleTimeString());
  if (o.next === 'none') return o.reason === 'gave-up' ? `${said} Redeliver sends the event again.` : said;
  return dueAt !== null && dueAt > now ? `${said} Redeliver sends the event again now.` : said;
}

/** What the receiver answered: its first line, with the whole of it (the service keeps 4000 characters) a click away. */
function answerPreview(body) {
  const text = String(body);
  const line = text.split('\n', 1)[0];
  if (line.length <= 60 && line === text) return el('code', {}, text);
  return el(
    'details',
    {},
    el('summary', {}, el('code', {}, line.length > 60 ? `${line.slice(0, 60)}…` : `${line}…`)),
    el('pre', {}, text),
  );
}
