// Which capture is selected, the page's place across a reload, and what selecting loads (a large body, the service's attempts).
import { el } from './render.js';
import { capturePlace, Drafts, editingBefore, rememberEditing, showPlace } from './tab-memory.js';
import { heldCapture, scheduleRender, serviceEvent, state } from './state.js';
import { act } from './connection.js';
import { awaitAttempts, loadAttempts } from './attempts.js';

export const drafts = new Drafts((captureId) => scheduleRender({ detail: captureId === state.selected }));
addEventListener('pagehide', () => drafts.store());

/** The capture the address names, until the page holds it (a snapshot or an older page brings it). */
state.wanted = capturePlace();

/** Selects the capture the address names once the page holds it, with its editor if it was open. */
export function restorePlace() {
  if (!state.wanted || !heldCapture(state.wanted)) return;
  const id = state.wanted;
  const editing = editingBefore() === id;
  state.wanted = null;
  select(id);
  if (editing) setEditing(id);
}

// The address changed by hand, or a link followed: that capture, or why it cannot be shown.
addEventListener('hashchange', () => {
  const id = capturePlace();
  if (!id || id === state.selected) return;
  state.wanted = id;
  if (heldCapture(id)) {
    restorePlace();
    return;
  }
  state.selected = null;
  setEditing(null);
  scheduleRender({ detail: true });
});

export function setEditing(captureId) {
  state.editing = captureId;
  // Opened by hand (e, or Edit & replay): the editor takes the focus once it is drawn (see editor.js).
  state.focusEditor = captureId !== null;
  rememberEditing(captureId);
}

/** Selects another capture; its id alone when the page does not hold it (retention dropped it, or it is on an older page). */
export function captureLink(id) {
  const other = heldCapture(id);
  if (!other) return el('span', { class: 'mono' }, id);
  return el(
    'button',
    { type: 'button', class: 'link', onclick: () => select(id) },
    `the capture of ${new Date(other.receivedAt).toLocaleTimeString()}`,
  );
}

export function select(id) {
  if (state.selected === id) return;
  state.selected = id;
  state.wanted = null;
  setEditing(null);
  showPlace(id);
  scheduleRender({ detail: true });
  const capture = heldCapture(id);
  if (capture?.bodyFile) loadWholeBody(id);
  const eventId = capture?.envelope?.id;
  if (serviceEvent(capture) && state.mode !== 'offline' && !state.attempts.has(eventId)) {
    loadAttempts(eventId).then(() => awaitAttempts(eventId));
  }
}

export async function loadWholeBody(captureId) {
  if (state.wholeBody?.id === captureId && !state.wholeBody.error) return;
  state.wholeBody = { id: captureId };
  const result = await act({ type: 'body', captureId });
  if (state.wholeBody?.id !== captureId) return; // another capture was selected meanwhile
  state.wholeBody = result.ok
    ? { id: captureId, body: result.data.body, bodyEncoding: result.data.bodyEncoding }
    : { id: captureId, error: result.error };
  scheduleRender({ detail: true });
}

/** The capture with its whole body, or null while that is still on its way (or could not be had). */
export function withWholeBody(capture) {
  if (!capture.bodyFile) return capture;
  const whole = state.wholeBody;
  if (whole?.id !== capture.id || whole.body === undefined) return null;
  const { bodyFile: _apart, ...rest } = capture;
  return { ...rest, body: whole.body, bodyEncoding: whole.bodyEncoding };
}
