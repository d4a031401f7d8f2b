// The page's state, shared by its modules, and the one place that schedules drawing it.

export const token = new URLSearchParams(location.search).get('token') ?? '';
export const $ = (id) => document.getElementById(id);

export const state = {
  /** id → capture */
  captures: new Map(),
  selected: null,
  hasMore: false,
  /**
   * The id of the oldest capture of the pages loaded (the snapshot, then each "Load older"): the next page
   * is older than it. Not the oldest held: a capture the search found further back may be held too.
   */
  oldestLoaded: null,
  endpoint: null,
  mode: null,
  forwardTo: null,
  listener: null,
  // --trace-url: where a delivery's trace is linked, {traceId} in it; null without.
  traceUrl: null,
  /** event id (or the id of a capture without one) → the event's story as clockhook sent it (see story.js) */
  stories: new Map(),
  /** eventId → event record from the API, or { error } */
  attempts: new Map(),
  /** eventId → how many attempts the page waits for the service to list (see watchAttempts) */
  awaitedAttempts: new Map(),
  /** captureId → { kind: 'ok'|'error', node } inline action results */
  results: new Map(),
  /** The id of the capture whose Edit & replay is open, or null. */
  editing: null,
  /** Whether the editor, just opened by hand, is to take the focus when it is drawn. */
  focusEditor: false,
  /**
   * The whole body of the selected capture when the listener kept it apart (capture.bodyFile):
   * captures arrive with only its beginning. { id, body, bodyEncoding } | { id, error } | { id } while loading.
   */
  wholeBody: null,
  /**
   * What the listener found for the search box's text over its whole store (the page holds only the
   * newest captures, and only the first 16 KiB of a large body): { query, ids, found: id → capture,
   * truncated, partial } | { query, error } | null.
   */
  search: null,
  /** The capture the address names, until the page holds it (a snapshot or an older page brings it). */
  wanted: null,
  /** The list's view: 'event' (one row per event id, the default) or 'request' (one row per capture). */
  view: (() => {
    try {
      return localStorage.getItem('clockhook.view') === 'request' ? 'request' : 'event';
    } catch {
      return 'event';
    }
  })(),
  /** The detail's open tab (see tabs.js), kept from one capture to the next. */
  tab: 'request',
  focusTab: false,
  /** captureId → the id of the capture its Diff tab compares it with, picked by hand. */
  compareWith: new Map(),
};

/** A capture the page holds: the list's, or one the search found among older ones. */
export const heldCapture = (id) => state.captures.get(id) ?? state.search?.found?.get(id);

/** What draws the page: the header, the list and the detail (set once by app.js). */
export const renderers = { header: () => {}, list: () => {}, detail: () => {} };
export function onRender(parts) {
  Object.assign(renderers, parts);
}

let frame = 0;
let renderDetailToo = false;
/** Draws the page again in the next frame, with the detail too when `detail`; many calls, one drawing. */
export function scheduleRender({ detail }) {
  renderDetailToo ||= detail;
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    renderers.header();
    renderers.list();
    if (renderDetailToo) renderers.detail();
    renderDetailToo = false;
  });
}

/** Whether the sender has had its answer (or is about to): from then on, the service may list the attempt. */
export function answered(capture) {
  return capture.forward !== undefined || capture.rejected !== null;
}

/** Every capture the page holds, once: the list's, then those only the search found. */
export function* heldCaptures() {
  yield* state.captures.values();
  for (const [id, capture] of state.search?.found ?? []) if (!state.captures.has(id)) yield capture;
}

export function errorText(error) {
  return `${error.code}: ${error.message}${error.requestId ? ` (requestId ${error.requestId})` : ''}`;
}

/**
 * Whether the service knows the capture's event: it carries an event id and a valid signature (a request
 * sent by hand, unsigned, names an event the service never made, and asking it about one fails).
 */
export const serviceEvent = (capture) => Boolean(capture?.envelope?.id) && capture.signature.status === 'valid';
