import { BulkReplay } from './bulk.js';
import { ClearCaptures } from './clear.js';
import { drawChart, outcome } from './chart.js';
import { renderMissed } from './missed.js';
import { curlCommand } from './curl.js';
import { clear, el, jsonTree } from './render.js';
import { capturePlace, Drafts, editingBefore, rememberEditing, showPlace } from './tab-memory.js';

const token = new URLSearchParams(location.search).get('token') ?? '';
const $ = (id) => document.getElementById(id);

const state = {
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
  /** eventId → event record from the API, or { error } */
  attempts: new Map(),
  /** eventId → how many attempts the page waits for the service to list (see watchAttempts) */
  awaitedAttempts: new Map(),
  /** captureId → { kind: 'ok'|'error', node } inline action results */
  results: new Map(),
  /** The id of the capture whose Edit & replay is open, or null. */
  editing: null,
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
};

/** A capture the page holds: the list's, or one the search found among older ones. */
const heldCapture = (id) => state.captures.get(id) ?? state.search?.found?.get(id);

// ---- the page's place across a reload (see tab-memory.js) -------------------------------

const drafts = new Drafts((captureId) => scheduleRender({ detail: captureId === state.selected }));
addEventListener('pagehide', () => drafts.store());

/** The capture the address names, until the page holds it (a snapshot or an older page brings it). */
let wantedCapture = capturePlace();

/** Selects the capture the address names once the page holds it, with its editor if it was open. */
function restorePlace() {
  if (!wantedCapture || !heldCapture(wantedCapture)) return;
  const id = wantedCapture;
  const editing = editingBefore() === id;
  wantedCapture = null;
  select(id);
  if (editing) setEditing(id);
}

// The address changed by hand, or a link followed: that capture, or why it cannot be shown.
addEventListener('hashchange', () => {
  const id = capturePlace();
  if (!id || id === state.selected) return;
  wantedCapture = id;
  if (heldCapture(id)) {
    restorePlace();
    return;
  }
  state.selected = null;
  setEditing(null);
  scheduleRender({ detail: true });
});

function setEditing(captureId) {
  state.editing = captureId;
  rememberEditing(captureId);
}

// ---- connection ---------------------------------------------------------------------------

let socket = null;
let retryMs = 500;
let nextId = 1;
const pending = new Map();

function setConnection(kind, text) {
  const node = $('connection');
  node.className = `conn conn-${kind}`;
  node.textContent = text;
}

function connect() {
  if (!token) {
    setConnection('closed', 'no token: open the URL clockhook listen printed');
    return;
  }
  setConnection('connecting', 'connecting');
  socket = new WebSocket(`ws://${location.host}/ws?token=${encodeURIComponent(token)}`);
  socket.addEventListener('open', () => {
    retryMs = 500;
    setConnection('open', 'live');
  });
  socket.addEventListener('message', (event) => receive(JSON.parse(event.data)));
  socket.addEventListener('close', () => {
    for (const [, resolve] of pending)
      resolve({
        ok: false,
        error: { code: 'disconnected', message: 'The connection to clockhook dropped; try again once it is back.' },
      });
    pending.clear();
    setConnection('closed', `reconnecting in ${Math.round(retryMs / 100) / 10} s`);
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 5000);
  });
}

/** Sends an action and resolves with its result message. */
function act(action) {
  return new Promise((resolve) => {
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      resolve({ ok: false, error: { code: 'disconnected', message: 'Not connected to clockhook.' } });
      return;
    }
    const id = nextId++;
    pending.set(id, resolve);
    socket.send(JSON.stringify({ ...action, id }));
  });
}

function receive(message) {
  switch (message.type) {
    case 'snapshot':
      state.captures = new Map(message.captures.map((c) => [c.id, c]));
      state.hasMore = message.hasMore;
      state.oldestLoaded = message.captures.at(-1)?.id ?? null;
      state.endpoint = message.endpoint;
      state.mode = message.mode;
      state.forwardTo = message.forwardTo;
      state.listener = message.listener;
      renderMissed($('missed'), message.missed ?? [], act);
      // Captures may have gone (Clear, retention, a restart): a search in the box is asked again.
      if (searchText()) searchStore(searchText());
      if (state.selected && !heldCapture(state.selected)) select(null);
      restorePlace();
      // A whole body that could not be fetched while the connection was down is fetched now.
      if (state.selected && state.wholeBody?.id === state.selected && state.wholeBody.error)
        loadWholeBody(state.selected);
      scheduleRender({ detail: true });
      break;
    case 'capture': {
      const previous = state.captures.get(message.capture.id);
      state.captures.set(message.capture.id, message.capture);
      if (!(previous && answered(previous)) && answered(message.capture)) deliveryAnswered(message.capture);
      scheduleRender({ detail: message.capture.id === state.selected });
      break;
    }
    case 'history':
      for (const capture of message.captures) state.captures.set(capture.id, capture);
      state.hasMore = message.hasMore;
      state.oldestLoaded = message.captures.at(-1)?.id ?? state.oldestLoaded;
      restorePlace();
      scheduleRender({});
      break;
    case 'missed':
      renderMissed($('missed'), message.missed, act);
      break;
    case 'endpoint':
      state.endpoint = message.endpoint;
      scheduleRender({ detail: true });
      break;
    case 'result': {
      const resolve = pending.get(message.id);
      pending.delete(message.id);
      resolve?.(message);
      break;
    }
  }
}

// ---- rendering ----------------------------------------------------------------------------

let frame = 0;
let renderDetailToo = false;
function scheduleRender({ detail }) {
  renderDetailToo ||= detail;
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    renderHeader();
    renderList();
    if (renderDetailToo) renderDetail();
    renderDetailToo = false;
  });
}

const newestFirst = (a, b) => (a.id < b.id ? 1 : -1);

function sortedCaptures() {
  return [...state.captures.values()].sort(newestFirst);
}

/** The search box's text as the filter compares it. */
const searchText = () => $('search').value.trim().toLowerCase();

/** The listener's answer for the text now in the box (its matches, or why there are none), or null while there is none yet. */
function searchAnswer() {
  const query = searchText();
  return query && state.search?.query === query ? state.search : null;
}

/** The matches the listener found for the text now in the box, or null. */
const currentSearch = () => (searchAnswer()?.ids ? state.search : null);

/** The captures the list is made from: those held, and while searching, the older ones the listener found. */
function listedCaptures() {
  return currentSearch() ? [...heldCaptures()].sort(newestFirst) : sortedCaptures();
}

function renderHeader() {
  const endpoint = state.endpoint;
  const node = $('endpoint');
  clear(node);
  if (endpoint) {
    const status = el('span', { class: `badge ${endpoint.status === 'enabled' ? 'ok' : 'bad'}` }, endpoint.status);
    node.append(
      `#${endpoint.id} `,
      status,
      ' ',
      el('span', { class: 'mono' }, endpoint.url),
      el(
        'div',
        { class: 'muted' },
        `events: ${(endpoint.enabledEvents ?? []).join(', ')}`,
        endpoint.secretHint ? ` · secret ${endpoint.secretHint}` : '',
      ),
    );
  } else node.append(el('span', { class: 'muted' }, 'none registered'));
  $('forward').textContent = state.forwardTo ?? 'capture-only (clockhook answers 200)';
  $('mode').textContent = state.mode ?? '–';
  const inactive = endpoint && endpoint.status !== 'enabled';
  $('banner').hidden = !inactive;
  $('reenable').hidden = !canReenable(endpoint);
  if (inactive) $('banner-text').textContent = endpointProblem(endpoint);
}

/** Why the service sends an endpoint that is not enabled nothing, and what to do. */
function endpointProblem(endpoint) {
  if (endpoint.status === 'deleted')
    return `Endpoint #${endpoint.id} was deleted: the service sends nothing here any more. Restart clockhook listen to register a new one (its secret is new).`;
  const why = endpoint.status === 'disabled' ? ' (it disables an endpoint after 10 failed deliveries in a row)' : '';
  return `Endpoint #${endpoint.id} is ${endpoint.status}: the service sends it nothing${why}.`;
}

/** A deleted endpoint cannot be enabled again; any other that is not enabled can. */
const canReenable = (endpoint) => Boolean(endpoint && endpoint.status !== 'enabled' && endpoint.status !== 'deleted');

function signatureBadge(signature) {
  switch (signature.status) {
    case 'valid':
      return el('span', { class: 'badge ok' }, 'signature valid');
    case 'missing':
      return el('span', { class: 'badge bad' }, 'signature missing');
    case 'invalid':
      return el('span', { class: 'badge bad', title: signature.hint ?? '' }, `invalid: ${signature.reason ?? '?'}`);
    default:
      return el('span', { class: 'badge plain' }, 'unchecked');
  }
}

function forwardBadge(capture) {
  if (capture.rejected)
    return el('span', { class: 'badge bad' }, `${capture.rejected.statusCode} ${capture.rejected.code}`);
  if (capture.forward === null) return el('span', { class: 'badge plain' }, 'captured only');
  if (!capture.forward) return el('span', { class: 'badge plain' }, 'forwarding…');
  const { statusCode, durationMs, error } = capture.forward;
  const kind = outcome(capture) === 'ok' ? 'ok' : 'warn';
  return el(
    'span',
    { class: `badge ${kind}`, title: error ?? '' },
    `${statusCode ?? error ?? 'failed'} · ${durationMs} ms`,
  );
}

function matchesFilters(capture) {
  const type = $('type-filter').value;
  const status = $('status-filter').value;
  const query = searchText();
  if (type && capture.envelope?.type !== type) return false;
  if (status === 'failed' && outcome(capture) !== 'failed') return false;
  if (status === 'bad-signature' && !(capture.signature.status === 'invalid' || capture.signature.status === 'missing'))
    return false;
  if (status === 'replay' && capture.source !== 'replay') return false;
  if (status === 'duplicate' && !capture.duplicateOf) return false;
  if (
    query &&
    !capture.body.toLowerCase().includes(query) &&
    !(capture.envelope?.id ?? '').toLowerCase().includes(query) &&
    !currentSearch()?.ids.has(capture.id)
  )
    return false;
  return true;
}

function visibleCaptures() {
  return listedCaptures().filter(matchesFilters);
}

function renderTypeFilter(captures) {
  const select = $('type-filter');
  const known = new Set([...select.options].map((o) => o.value));
  for (const type of new Set(captures.map((c) => c.envelope?.type).filter(Boolean))) {
    if (!known.has(type)) select.append(el('option', { value: type }, type));
  }
}

/** When a capture came: its time, with its day when that is not today (the store outlives a day). */
function receivedLabel(receivedAt) {
  const at = new Date(receivedAt);
  const time = at.toLocaleTimeString();
  const today = at.toDateString() === new Date().toDateString();
  return el(
    'span',
    { class: 'time', title: at.toLocaleString() },
    today ? time : `${at.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })}, ${time}`,
  );
}

function renderList() {
  const all = sortedCaptures();
  renderTypeFilter(all);
  drawChart($('chart'), all);
  const list = $('captures');
  clear(list);
  const visible = visibleCaptures();
  renderSearchNote();
  bulk.render($('bulk'), { shown: isNarrowed() ? visible : null, forwardTo: state.forwardTo });
  clearing.render($('clear-bar'), { unpinned: all.filter((capture) => !capture.pinned).length, more: state.hasMore });
  for (const capture of visible) {
    const markers = [signatureBadge(capture.signature), forwardBadge(capture)];
    if (capture.source === 'replay') markers.push(el('span', { class: 'badge info' }, 'replay'));
    if (capture.duplicateOf)
      markers.push(el('span', { class: 'badge warn', title: `same event id as ${capture.duplicateOf}` }, 'duplicate'));
    if (capture.contractProblems.length > 0)
      markers.push(
        el(
          'span',
          { class: 'badge warn', title: capture.contractProblems.map((p) => `${p.field}: ${p.message}`).join('\n') },
          `${capture.contractProblems.length} contract problem${capture.contractProblems.length > 1 ? 's' : ''}`,
        ),
      );
    if (capture.pinned) markers.push(el('span', { class: 'badge plain' }, 'pinned'));
    const row = el(
      'li',
      {
        class: `capture${capture.id === state.selected ? ' selected' : ''}`,
        'data-id': capture.id,
        onclick: () => select(capture.id),
      },
      receivedLabel(capture.receivedAt),
      el('span', { class: 'type' }, capture.envelope?.type || `${capture.method} ${capture.path}`),
      el('span', { class: 'id' }, capture.envelope?.id ?? '(no event id)'),
      el('span', { class: 'markers' }, markers),
    );
    list.append(row);
  }
  $('empty').hidden = all.length > 0;
  $('older').hidden = !state.hasMore;
}

/** Whether a filter or the search box narrows the list (only then is replaying all it shows offered). */
const isNarrowed = () => Boolean($('type-filter').value || $('status-filter').value !== 'all' || searchText());

const bulk = new BulkReplay({ act, errorText, changed: () => scheduleRender({}) });
const clearing = new ClearCaptures({ act, errorText, changed: () => scheduleRender({}) });

// ---- search over the whole store ----------------------------------------------------------

let searchTimer = 0;
/** Filters what the page holds at once; asks the listener about the rest once typing pauses. */
function searchChanged() {
  clearTimeout(searchTimer);
  const query = searchText();
  if (!query) state.search = null;
  else searchTimer = setTimeout(() => searchStore(query), 250);
  scheduleRender({});
}

async function searchStore(query) {
  const result = await act({ type: 'search', query });
  if (searchText() !== query) return; // typed on meanwhile
  state.search = result.ok
    ? {
        query,
        ids: new Set(result.data.captures.map((c) => c.id)),
        found: new Map(result.data.captures.map((c) => [c.id, c])),
        truncated: result.data.truncated,
        partial: result.data.partial,
      }
    : { query, error: errorText(result.error) };
  scheduleRender({});
}

/** Says when the search could not cover everything: too many matches, large bodies read in part, or a failure. */
function renderSearchNote() {
  const note = $('search-note');
  const search = searchAnswer();
  const text = !search
    ? ''
    : search.error
      ? `Only the captures shown were searched: ${search.error}`
      : [
          search.truncated ? `Showing the newest ${search.ids.size} matches.` : '',
          search.partial ? 'Some large bodies were searched in their first 16 KiB only.' : '',
        ]
          .filter(Boolean)
          .join(' ');
  note.textContent = text;
  note.hidden = text === '';
}

/** Selects another capture; its id alone when the page does not hold it (retention dropped it, or it is on an older page). */
function captureLink(id) {
  const other = heldCapture(id);
  if (!other) return el('span', { class: 'mono' }, id);
  return el(
    'button',
    { type: 'button', class: 'link', onclick: () => select(id) },
    `the capture of ${new Date(other.receivedAt).toLocaleTimeString()}`,
  );
}

function select(id) {
  if (state.selected === id) return;
  state.selected = id;
  wantedCapture = null;
  setEditing(null);
  showPlace(id);
  scheduleRender({ detail: true });
  const capture = heldCapture(id);
  if (capture?.bodyFile) loadWholeBody(id);
  const eventId = capture?.envelope?.id;
  if (eventId && state.mode !== 'offline' && !state.attempts.has(eventId)) {
    loadAttempts(eventId).then(() => awaitAttempts(eventId));
  }
}

async function loadWholeBody(captureId) {
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
function withWholeBody(capture) {
  if (!capture.bodyFile) return capture;
  const whole = state.wholeBody;
  if (whole?.id !== capture.id || whole.body === undefined) return null;
  const { bodyFile: _apart, ...rest } = capture;
  return { ...rest, body: whole.body, bodyEncoding: whole.bodyEncoding };
}

/** Says what is shown of a body kept apart until the whole of it is here. */
function partialBodyNote(capture) {
  const whole = state.wholeBody?.id === capture.id ? state.wholeBody : null;
  if (whole?.error) {
    return el(
      'div',
      {},
      el('div', { class: 'result error', role: 'alert' }, `Could not load the whole body: ${errorText(whole.error)}`),
      el('button', { type: 'button', onclick: () => loadWholeBody(capture.id) }, 'Try again'),
    );
  }
  return el(
    'p',
    { class: 'muted' },
    `Loading the whole body (${capture.bodySize} bytes); showing its first ${capture.body.length} characters.`,
  );
}

async function loadAttempts(eventId) {
  const result = await act({ type: 'attempts', eventId });
  const record = result.ok ? result.data : { error: result.error };
  state.attempts.set(eventId, record);
  scheduleRender({ detail: true });
  return record;
}

/** Whether the sender has had its answer (or is about to): from then on, the service may list the attempt. */
function answered(capture) {
  return capture.forward !== undefined || capture.rejected !== null;
}

/** Every capture the page holds, once: the list's, then those only the search found. */
function* heldCaptures() {
  yield* state.captures.values();
  for (const [id, capture] of state.search?.found ?? []) if (!state.captures.has(id)) yield capture;
}

/**
 * The service must list at least one attempt for each delivery of the event that the page holds and that was
 * answered (it may list more: to other endpoints, or deliveries retention dropped). A replay is not the
 * service's doing.
 */
function deliveriesAnswered(eventId) {
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
function deliveryAnswered(capture) {
  const eventId = capture.envelope?.id;
  if (capture.source !== 'delivery' || !eventId || !state.attempts.has(eventId)) return;
  if (heldCapture(state.selected)?.envelope?.id === eventId) awaitAttempts(eventId);
  else state.attempts.delete(eventId);
}

/** Watches the event's attempts when the service lists fewer than the answered deliveries the page holds. */
function awaitAttempts(eventId) {
  const count = deliveriesAnswered(eventId);
  const record = state.attempts.get(eventId);
  if (record && !record.error && record.delivery_attempts.length < count) watchAttempts(eventId, count);
}

/**
 * The service lists an attempt only once it is complete, a moment after the delivery was answered. So the
 * page asks for the event's attempts 0.5, 1, 2, 4 and 8 s later, until it lists `count` of them or asking
 * fails; Refresh is there for anything slower. One watch per event: a second one raises its count.
 */
async function watchAttempts(eventId, count) {
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

function showResult(captureId, ok, content) {
  state.results.set(captureId, { ok, content });
  scheduleRender({ detail: true });
}

function errorText(error) {
  return `${error.code}: ${error.message}${error.requestId ? ` (requestId ${error.requestId})` : ''}`;
}

async function replay(capture, mode, body) {
  const result = await act({ type: 'replay', captureId: capture.id, mode, ...(body === undefined ? {} : { body }) });
  if (result.ok) {
    const what =
      body === undefined ? `Replayed (${mode === 'asis' ? 'as-is' : 're-signed'})` : 'Sent the edited body (re-signed)';
    showResult(
      capture.id,
      true,
      `${what}: the app answered ${result.data.statusCode} in ${result.data.durationMs} ms.`,
    );
  } else showResult(capture.id, false, errorText(result.error));
}

async function redeliver(capture) {
  const eventId = capture.envelope.id;
  // How many attempts the service lists before, to know when it lists those of the redelivery too.
  const before = await loadAttempts(eventId);
  const result = await act({ type: 'redeliver', eventId });
  if (result.ok) {
    showResult(
      capture.id,
      true,
      `Redelivery queued for ${result.data.endpointsNotified} endpoint(s); it arrives as a new capture with the same event id, and the service's attempts below show it once it is complete.`,
    );
    watchAttempts(eventId, before.error ? Infinity : before.delivery_attempts.length + result.data.endpointsNotified);
    return;
  }
  if (result.error.code === 'cannot_redeliver_synthetic_event') {
    const content = el(
      'span',
      {},
      'A ping cannot be redelivered: the service only re-sends real events. ',
      el('button', { type: 'button', onclick: () => ping(capture) }, 'Send a new ping'),
    );
    showResult(capture.id, false, content);
  } else showResult(capture.id, false, errorText(result.error));
}

async function ping(capture) {
  const result = await act({ type: 'ping' });
  if (result.ok)
    showResult(capture.id, true, `Ping ${result.data.eventId} queued for endpoint #${result.data.endpointId}.`);
  else showResult(capture.id, false, errorText(result.error));
}

async function copyCurl(capture) {
  const command = curlCommand(capture, state.listener ?? location.href);
  const signed = 'x-service-signature' in capture.headers;
  const note = signed
    ? ', with its original signature: the listener refuses that once it is older than its tolerance (300 s unless --tolerance). Replay re-signs.'
    : '.';
  try {
    await navigator.clipboard.writeText(command);
    showResult(capture.id, true, `Copied a curl command that sends this request to the listener again${note}`);
  } catch {
    // No clipboard for this page (a browser that refuses it): the command to copy by hand.
    showResult(
      capture.id,
      true,
      el(
        'span',
        {},
        `This curl command sends the request to the listener again${note}`,
        el('textarea', { readonly: true, rows: 4, class: 'mono' }, command),
      ),
    );
  }
}

function downloadJson(capture) {
  const blob = new Blob([JSON.stringify(capture, null, 2)], { type: 'application/json' });
  const link = el('a', { href: URL.createObjectURL(blob), download: `${capture.id}.json` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

const RAW_PREVIEW = 64 * 1024;

function bodyText(capture) {
  if (capture.bodyEncoding !== 'base64') return capture.body;
  return `(not UTF-8: ${capture.bodySize} bytes, base64)\n${capture.body}`;
}

/** The raw body, cut at 64 KB until asked: laying out a megabyte on every selection would stall the page. */
function rawBody(capture) {
  const text = bodyText(capture);
  if (text.length <= RAW_PREVIEW) return el('pre', {}, text);
  const pre = el('pre', {}, text.slice(0, RAW_PREVIEW));
  const more = el('button', { type: 'button' }, `Show all ${text.length} characters`);
  more.addEventListener('click', () => {
    pre.textContent = text;
    more.remove();
  });
  return el('div', {}, pre, more);
}

/** What the app answered; the capture keeps the first 16 KiB of its body. */
function appAnswer(forward) {
  return el(
    'div',
    {},
    keyValueTable([
      ['target', forward.target],
      ['status', forward.statusCode],
      ['duration', `${forward.durationMs} ms`],
      ['error', forward.error],
    ]),
    // As HTTP has them: headers, then the body. No answer (refused, timed out) has neither.
    forward.statusCode === null
      ? null
      : [
          el('h4', {}, 'Headers'),
          keyValueTable(Object.entries(forward.headers ?? {})),
          el('h4', {}, 'Body'),
          forward.bodyTruncated
            ? el('p', { class: 'muted' }, `The answer was ${forward.bodySize} bytes; clockhook keeps its first 16 KiB.`)
            : null,
          el(
            'pre',
            {},
            forward.bodyEncoding === 'base64' ? `(base64) ${forward.body}` : forward.body || '(empty body)',
          ),
        ],
  );
}

/**
 * For a delivery the app did not take (no 2xx, or no answer at all), what it said, at the top of the
 * detail: what the developer fixing the handler looks for first, and it sits below the request.
 */
function answerNote(forward) {
  if (!forward || (forward.statusCode !== null && forward.statusCode >= 200 && forward.statusCode < 300)) return null;
  const line =
    forward.bodyEncoding === 'utf8'
      ? (forward.body
          .split('\n')
          .map((l) => l.trim())
          .find(Boolean) ?? '')
      : '';
  const gist = line.length > 160 ? `${line.slice(0, 159)}…` : line;
  const said =
    forward.statusCode === null
      ? `The app did not answer: ${forward.error}. `
      : `The app answered ${forward.statusCode} in ${forward.durationMs} ms${gist ? `: ${gist}` : ''}. `;
  const see = el(
    'button',
    { type: 'button', class: 'link', onclick: () => $('app-response')?.scrollIntoView({ block: 'start' }) },
    'See its response',
  );
  return el('p', { class: 'answer-note' }, el('span', {}, said), see);
}

function parsedBody(capture) {
  if (capture.bodyEncoding === 'base64') return undefined;
  try {
    return JSON.parse(capture.body);
  } catch {
    return undefined;
  }
}

function keyValueTable(entries) {
  return el(
    'table',
    {},
    entries.map(([k, v]) =>
      el('tr', {}, el('th', {}, k), el('td', { class: 'mono' }, Array.isArray(v) ? v.join(', ') : String(v ?? '–'))),
    ),
  );
}

/** The open editor's elements, kept from one render to the next so that the text, the caret and the focus stay. */
let editorView = null;

function editor(capture) {
  if (editorView?.captureId !== capture.id) editorView = newEditor(capture);
  editorView.unkept.hidden = !drafts.isUnkept(capture.id);
  return editorView.node;
}

function newEditor(capture) {
  const area = el('textarea', { 'aria-label': 'Body to replay', spellcheck: 'false' });
  const parsed = parsedBody(capture);
  area.value = drafts.get(capture.id) ?? (parsed === undefined ? capture.body : JSON.stringify(parsed, null, 2));
  const problem = el('div', { class: 'invalid', role: 'alert' });
  const send = el('button', { type: 'button' }, 'Send');
  const validate = () => {
    try {
      JSON.parse(area.value);
      problem.textContent = '';
      send.disabled = false;
      return true;
    } catch (error) {
      problem.textContent = `Invalid JSON: ${error.message}`;
      send.disabled = true;
      return false;
    }
  };
  area.addEventListener('input', () => {
    drafts.keep(capture.id, area.value);
    validate();
  });
  send.addEventListener('click', () => validate() && replay(capture, 'resign', area.value));
  const close = () => {
    drafts.drop(capture.id);
    setEditing(null);
    scheduleRender({ detail: true });
  };
  validate();
  const unkept = el(
    'p',
    { class: 'muted' },
    'The browser would not keep this text for the tab (too large, or site data blocked): a reload of the page would lose it.',
  );
  const node = el(
    'div',
    { class: 'editor' },
    el('h3', {}, 'Edit & replay (re-signed with the current time)'),
    area,
    problem,
    unkept,
    el('div', { class: 'actions' }, send, el('button', { type: 'button', onclick: close }, 'Close')),
  );
  return { captureId: capture.id, node, area, unkept };
}

function attemptsSection(capture) {
  const eventId = capture.envelope?.id;
  if (!eventId) return el('p', { class: 'muted' }, 'Not an event envelope.');
  if (state.mode === 'offline') return el('p', { class: 'muted' }, 'Offline: no API to ask.');
  const record = state.attempts.get(eventId);
  const refresh = el('button', { type: 'button', onclick: () => loadAttempts(eventId) }, 'Refresh');
  if (!record) return el('p', { class: 'muted' }, 'Loading…');
  if (record.error) return el('div', {}, el('div', { class: 'result error' }, errorText(record.error)), refresh);
  renderAgainWhenDue(record.outlook);
  // Numbered in the order the service lists them: a redelivery's attempts start again at 1 per delivery.
  // The API client has read the fields whatever the service names them (see normalizeAttempt).
  const rows = record.delivery_attempts.map((a, i) => {
    const status =
      a.statusCode === null
        ? '–'
        : el('span', { class: a.statusCode >= 200 && a.statusCode < 300 ? 'ok-text' : 'bad-text' }, a.statusCode);
    const at = a.createdAt ? new Date(a.createdAt) : null;
    return el(
      'tr',
      {},
      el('td', {}, i + 1),
      el('td', {}, a.endpointId === undefined ? '–' : `#${a.endpointId}`),
      el('td', {}, status),
      el('td', {}, a.durationMs === undefined ? '–' : `${a.durationMs} ms`),
      el('td', {}, at && !Number.isNaN(at.getTime()) ? at.toLocaleTimeString() : '–'),
      el(
        'td',
        { class: 'answer' },
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
    refresh,
  );
}

let dueTimer = 0;
/** Shows the detail again when the soonest attempt it says "is due" falls due, to say "was due" from then on. */
function renderAgainWhenDue(outlook) {
  clearTimeout(dueTimer);
  const now = Date.now();
  const soonest = Math.min(...(outlook ?? []).filter((o) => o.next !== 'none' && o.dueAt > now).map((o) => o.dueAt));
  // setTimeout takes at most 2^31 - 1 ms (~24.8 days); a later due time is looked at again after that.
  if (Number.isFinite(soonest))
    dueTimer = setTimeout(() => scheduleRender({ detail: true }), Math.min(soonest - now, 2 ** 31 - 1));
}

/** What comes next for an endpoint whose latest attempt failed (the server reads it: see deliveryOutlook). */
function outlookText(o) {
  if (o.next === 'none') {
    if (o.reason === 'deleted') return `Endpoint #${o.endpointId} no longer exists: nothing more is sent to it.`;
    if (o.reason === 'disabled')
      return `Endpoint #${o.endpointId} is disabled, and a disabled endpoint is excluded from deliveries: no more attempts come while it is.`;
    return `Endpoint #${o.endpointId}: the delivery failed after 5 attempts; the service does not try again. Redeliver sends the event again.`;
  }
  const next = `Endpoint #${o.endpointId}: attempt ${o.attempt} of 5`;
  if (o.dueAt === null) return `${next} comes later, by the service's retry policy.`;
  const at = new Date(o.dueAt).toLocaleTimeString();
  return o.dueAt > Date.now()
    ? `${next} is due at about ${at}, by the service's retry policy. Redeliver sends the event again now.`
    : `${next} was due at about ${at}; it shows here once it completes.`;
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

/**
 * Where the open editor is scrolled to, and the caret of someone typing in it, taken before a render;
 * the function it returns puts them back (the editor itself outlives the render: see editorView).
 */
function keepEditorPlace() {
  if (editorView && editorView.captureId !== state.editing) editorView = null;
  const area = editorView?.area;
  if (!area) return () => {};
  const scrollTop = area.scrollTop;
  const caret = document.activeElement === area ? [area.selectionStart, area.selectionEnd] : null;
  return () => {
    if (!area.isConnected) return;
    if (caret) {
      area.focus({ preventScroll: true });
      area.setSelectionRange(...caret);
    }
    area.scrollTop = scrollTop;
  };
}

function renderDetail() {
  const pane = $('detail');
  const restoreEditorPlace = keepEditorPlace();
  clear(pane);
  clearTimeout(dueTimer); // the attempts shown, if any, set it again
  const capture = state.selected ? heldCapture(state.selected) : null;
  if (!capture) {
    const missing = wantedCapture && state.mode !== null;
    pane.append(
      el(
        'p',
        { class: 'empty' },
        missing
          ? `The page's address names ${wantedCapture}, which is not among the captures the page holds: it has left the store, or is older (Load older captures, below the list).`
          : 'Select a capture.',
      ),
    );
    return;
  }
  // What needs the whole body waits for it when the listener kept it apart.
  const whole = withWholeBody(capture);
  const result = state.results.get(capture.id);
  // Element.append would print null as "null": only real sections go in.
  const sections = [
    el(
      'h2',
      {},
      capture.envelope?.type || `${capture.method} ${capture.path}`,
      ' ',
      el('span', { class: 'muted mono' }, capture.envelope?.id ?? ''),
    ),
    el(
      'div',
      { class: 'muted' },
      `${new Date(capture.receivedAt).toLocaleString()} · ${capture.source}`,
      capture.replayOf ? [' of ', captureLink(capture.replayOf)] : null,
      ` · ${capture.method} ${capture.path} · ${capture.bodySize} bytes`,
    ),
    answerNote(capture.forward),
    capture.duplicateOf
      ? el(
          'p',
          { class: 'duplicate-note' },
          `Duplicate: ${capture.signature.status === 'valid' ? 'the service delivered this event before' : 'an earlier request carried this event id'}, in `,
          captureLink(capture.duplicateOf),
          '. Receivers deduplicate on the event id; your app should not act on it twice.',
        )
      : null,
    detailActions(capture, whole),
    result ? el('div', { class: `result ${result.ok ? 'ok' : 'error'}`, role: 'status' }, result.content) : null,
    state.editing === capture.id && whole ? editor(whole) : null,
    capture.contractProblems.length
      ? el(
          'div',
          {},
          el('h3', {}, 'Contract problems'),
          el(
            'ul',
            {},
            capture.contractProblems.map((p) => el('li', {}, `${p.field}: ${p.message}`)),
          ),
        )
      : null,
    ...requestSections(capture, whole),
    el('h3', { id: 'app-response' }, "The app's response"),
    appResponseSection(capture),
    el('h3', {}, "The service's view (delivery_attempts)"),
    attemptsSection(capture),
  ];
  pane.append(...sections.filter(Boolean));
  restoreEditorPlace();
}

/** The detail's buttons; those that need the whole body of a large capture wait for it (`whole` null). */
function detailActions(capture, whole) {
  const isEvent = Boolean(capture.envelope?.id);
  const hasApi = state.mode !== 'offline';
  const waiting = whole === null ? { disabled: true, title: 'Waiting for the whole body' } : {};
  // A button that is not offered says why, on hover: a greyed-out one alone leaves the reader guessing.
  const unless = (why) => (why ? { disabled: true, title: why } : {});
  const noApp = unless(
    !state.forwardTo && 'No app to replay to: listen runs in capture-only mode. Start it with --forward-to <your app>.',
  );
  const noApi = !hasApi && 'Offline (--secret without an API key): there is no service to ask.';
  const noEndpoint = !state.endpoint
    ? 'No endpoint to ping: this listen registered none.'
    : state.endpoint.status === 'deleted' && `Endpoint #${state.endpoint.id} was deleted: there is nothing to ping.`;
  return el(
    'div',
    { class: 'actions' },
    el('button', { type: 'button', onclick: () => replay(capture, 'resign'), ...noApp }, 'Replay'),
    el('button', { type: 'button', onclick: () => replay(capture, 'asis'), ...noApp }, 'Replay as-is'),
    el(
      'button',
      {
        type: 'button',
        onclick: () => {
          setEditing(capture.id);
          scheduleRender({ detail: true });
        },
        ...waiting,
        ...noApp,
      },
      'Edit & replay',
    ),
    el(
      'button',
      {
        type: 'button',
        onclick: () => redeliver(capture),
        ...unless(noApi || (!isEvent && 'This request has no event id: the service has no event to send again.')),
      },
      'Redeliver',
    ),
    el('button', { type: 'button', onclick: () => ping(capture), ...unless(noApi || noEndpoint) }, 'Ping endpoint'),
    el('button', { type: 'button', onclick: () => copyCurl(whole), ...waiting }, 'Copy as curl'),
    el('button', { type: 'button', onclick: () => downloadJson(whole), ...waiting }, 'Download JSON'),
    el(
      'button',
      { type: 'button', onclick: () => act({ type: 'pin', captureId: capture.id, pinned: !capture.pinned }) },
      capture.pinned ? 'Unpin' : 'Pin',
    ),
    canReenable(state.endpoint) ? el('button', { type: 'button', onclick: reenable }, 'Re-enable endpoint') : null,
  );
}

/** What the sender sent: the signature's verdict, the envelope, the raw body and the headers. */
function requestSections(capture, whole) {
  const signature = capture.signature;
  const parsed = whole && parsedBody(whole);
  return [
    el('h3', {}, 'Signature'),
    keyValueTable([
      ['verdict', signature.status],
      ['reason', signature.reason],
      [
        't',
        signature.timestamp === undefined
          ? undefined
          : `${signature.timestamp} (${new Date(signature.timestamp * 1000).toISOString()})`,
      ],
      ['age', signature.ageSeconds === undefined ? '–' : `${signature.ageSeconds} s`],
      ['hint', signature.hint],
    ]),
    el('h3', {}, 'Envelope'),
    whole === null
      ? partialBodyNote(capture)
      : parsed === undefined
        ? el('p', { class: 'muted' }, 'The body is not JSON.')
        : el('div', { class: 'json mono' }, jsonTree(parsed)),
    el('h3', {}, 'Raw body'),
    capture.bodyTruncated
      ? el(
          'p',
          { class: 'muted' },
          `The body was ${capture.bodySize} bytes, over the listener's limit: only its beginning was captured, and the sender was answered 413.`,
        )
      : null,
    rawBody(whole ?? capture),
    el('h3', {}, 'Request headers'),
    keyValueTable(Object.entries(capture.headers)),
  ];
}

/** What the app answered, or why there is no answer. */
function appResponseSection(capture) {
  const forward = capture.forward;
  if (forward) return appAnswer(forward);
  const why = capture.rejected
    ? `Not forwarded: clockhook answered ${capture.rejected.statusCode} ${capture.rejected.code}.`
    : forward === null
      ? 'Capture-only mode: clockhook answered 200.'
      : 'Waiting for the app…';
  return el('p', { class: 'muted' }, why);
}

async function reenable() {
  const result = await act({ type: 'enable-endpoint' });
  if (!result.ok) {
    $('banner-text').textContent = `Could not re-enable: ${errorText(result.error)}`;
    $('banner').hidden = false;
  }
}

// ---- controls -----------------------------------------------------------------------------

function move(step) {
  const visible = visibleCaptures();
  if (visible.length === 0) return;
  const index = visible.findIndex((c) => c.id === state.selected);
  const next = visible[Math.min(visible.length - 1, Math.max(0, index === -1 ? 0 : index + step))];
  select(next.id);
  requestAnimationFrame(() =>
    document.querySelector(`.capture[data-id="${next.id}"]`)?.scrollIntoView({ block: 'nearest' }),
  );
}

document.addEventListener('keydown', (event) => {
  const typing = event.target instanceof HTMLElement && ['INPUT', 'TEXTAREA', 'SELECT'].includes(event.target.tagName);
  if (typing || event.metaKey || event.ctrlKey || event.altKey) return;
  if (event.key === 'ArrowDown') {
    move(1);
    event.preventDefault();
  } else if (event.key === 'ArrowUp') {
    move(-1);
    event.preventDefault();
  } else if (event.key === 'r' && state.selected) {
    const capture = heldCapture(state.selected);
    if (capture && state.forwardTo) replay(capture, 'resign');
  } else if (event.key === '/') {
    // As on GitHub and in most web apps: / goes to the search box.
    $('search').focus();
    event.preventDefault();
  }
});

for (const id of ['type-filter', 'status-filter']) $(id).addEventListener('input', () => scheduleRender({}));
$('search').addEventListener('input', searchChanged);
$('clear').addEventListener('click', () => clearing.ask());
$('reenable').addEventListener('click', reenable);
$('older').addEventListener('click', () => {
  if (state.oldestLoaded && socket?.readyState === WebSocket.OPEN)
    socket.send(JSON.stringify({ type: 'history', before: state.oldestLoaded }));
});
setInterval(() => scheduleRender({}), 30_000); // the chart's minutes move on

connect();
