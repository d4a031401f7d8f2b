// What the page does to a capture, its event and the endpoint: replay, redeliver, ping, copy, download, re-enable.
import { curlCommand } from './curl.js';
import { download, el, saveScenario } from './render.js';
import { errorText, scheduleRender, serviceEvent, state, $ } from './state.js';
import { act } from './connection.js';
import { canReenable } from './endpoint.js';
import { setEditing } from './selection.js';
import { loadAttempts, watchAttempts } from './attempts.js';

export function showResult(captureId, ok, content) {
  state.results.set(captureId, { ok, content });
  scheduleRender({ detail: true });
}

export async function replay(capture, mode, body) {
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

export async function redeliver(capture) {
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
      el('button', { type: 'button', onclick: () => ping() }, 'Send a new ping'),
    );
    showResult(capture.id, false, content);
  } else showResult(capture.id, false, errorText(result.error));
}

/** Pings the endpoint; what came of it is said beside it, in the header. */
export async function ping() {
  const result = await act({ type: 'ping' });
  const node = $('endpoint-result');
  node.className = `endpoint-result ${result.ok ? 'ok-text' : 'bad-text'}`;
  node.textContent = result.ok
    ? `Ping ${result.data.eventId} queued for endpoint #${result.data.endpointId}.`
    : errorText(result.error);
}

export async function copyCurl(capture) {
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

export function downloadJson(capture) {
  download(`${capture.id}.json`, JSON.stringify(capture, null, 2), 'application/json');
}

/** The detail's buttons; those that need the whole body of a large capture wait for it (`whole` null). */
// A button that is not offered says why, on hover: a greyed-out one alone leaves the reader guessing.
const unless = (why) => (why ? { disabled: true, title: why } : {});
const noApi = () => state.mode === 'offline' && 'Offline (--secret without an API key): there is no service to ask.';

/** The capture's own actions, above the detail; those that need the whole body of a large capture wait for it. */
export function captureActions(capture, whole) {
  const waiting = whole === null ? { disabled: true, title: 'Waiting for the whole body' } : {};
  const noApp = unless(
    !state.forwardTo && 'No app to replay to: listen runs in capture-only mode. Start it with --forward-to <your app>.',
  );
  const edit = () => {
    setEditing(capture.id);
    scheduleRender({ detail: true });
  };
  return el(
    'div',
    { class: 'actions', role: 'group', 'aria-label': 'This capture' },
    el('button', { type: 'button', onclick: () => replay(capture, 'resign'), ...noApp }, 'Replay'),
    el('button', { type: 'button', onclick: () => replay(capture, 'asis'), ...noApp }, 'Replay as-is'),
    el('button', { type: 'button', onclick: edit, ...waiting, ...noApp }, 'Edit & replay'),
    el('button', { type: 'button', onclick: () => copyCurl(whole), ...waiting }, 'Copy as curl'),
    el('button', { type: 'button', onclick: () => downloadJson(whole), ...waiting }, 'Download JSON'),
    el('button', { type: 'button', onclick: () => downloadHar(capture) }, 'Download HAR'),
    el(
      'button',
      { type: 'button', onclick: () => downloadScenario(capture), title: scenarioTitle(capture) },
      'Save as scenario',
    ),
    el(
      'button',
      { type: 'button', onclick: () => act({ type: 'pin', captureId: capture.id, pinned: !capture.pinned }) },
      capture.pinned ? 'Unpin' : 'Pin',
    ),
  );
}

/** The event's actions, in the Attempts tab: only for an event the service knows (see serviceEvent). */
export function eventActions(capture) {
  if (!serviceEvent(capture)) return null;
  const eventId = capture.envelope.id;
  return el(
    'div',
    { class: 'actions', role: 'group', 'aria-label': 'This event' },
    el('button', { type: 'button', onclick: () => redeliver(capture), ...unless(noApi()) }, 'Redeliver'),
    el('button', { type: 'button', onclick: () => loadAttempts(eventId), ...unless(noApi()) }, 'Refresh attempts'),
  );
}

/** The endpoint's actions, in the header beside it. */
export function endpointActions() {
  const endpoint = state.endpoint;
  const noEndpoint = !endpoint
    ? 'No endpoint to ping: this listen registered none.'
    : endpoint.status === 'deleted' && `Endpoint #${endpoint.id} was deleted: there is nothing to ping.`;
  return [
    el('button', { type: 'button', onclick: () => ping(), ...unless(noApi() || noEndpoint) }, 'Ping endpoint'),
    canReenable(endpoint) ? el('button', { type: 'button', onclick: reenable }, 'Re-enable endpoint') : null,
  ];
}

/** The capture as HAR 1.2, as `clockhook captures export --format har` writes it. */
async function downloadHar(capture) {
  const result = await act({ type: 'har', captureId: capture.id });
  if (!result.ok) return showResult(capture.id, false, errorText(result.error));
  download(`${capture.id}.har`, JSON.stringify(result.data, null, 2), 'application/json');
}

const scenarioTitle = (capture) =>
  capture.envelope
    ? `every delivery of ${capture.envelope.id} held, in order: play it with clockhook replay --scenario`
    : 'this capture, to play with clockhook replay --scenario';

/** The event's deliveries (or this capture) as a scenario, as `captures export --format scenario` writes it. */
async function downloadScenario(capture) {
  const request = capture.envelope ? { eventId: capture.envelope.id } : { captureIds: [capture.id] };
  const result = await saveScenario(act, request, capture.envelope ? capture.envelope.id : capture.id);
  if (!result.ok) showResult(capture.id, false, errorText(result.error));
}

export async function reenable() {
  const result = await act({ type: 'enable-endpoint' });
  if (!result.ok) {
    $('banner-text').textContent = `Could not re-enable: ${errorText(result.error)}`;
    $('banner').hidden = false;
  }
}
