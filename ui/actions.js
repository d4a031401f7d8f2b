// What the page does to a capture, its event and the endpoint: replay, redeliver, ping, copy, download, re-enable.
import { curlCommand } from './curl.js';
import { el } from './render.js';
import { errorText, scheduleRender, serviceEvent, state, $ } from './state.js';
import { act } from './connection.js';
import { canReenable } from './header.js';
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
      el('button', { type: 'button', onclick: () => ping(capture) }, 'Send a new ping'),
    );
    showResult(capture.id, false, content);
  } else showResult(capture.id, false, errorText(result.error));
}

export async function ping(capture) {
  const result = await act({ type: 'ping' });
  if (result.ok)
    showResult(capture.id, true, `Ping ${result.data.eventId} queued for endpoint #${result.data.endpointId}.`);
  else showResult(capture.id, false, errorText(result.error));
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
  const blob = new Blob([JSON.stringify(capture, null, 2)], { type: 'application/json' });
  const link = el('a', { href: URL.createObjectURL(blob), download: `${capture.id}.json` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

/** The detail's buttons; those that need the whole body of a large capture wait for it (`whole` null). */
export function detailActions(capture, whole) {
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
    // Redeliver is the event's: offered only for one the service knows (see serviceEvent).
    isEvent && serviceEvent(capture)
      ? el('button', { type: 'button', onclick: () => redeliver(capture), ...unless(noApi) }, 'Redeliver')
      : null,
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

export async function reenable() {
  const result = await act({ type: 'enable-endpoint' });
  if (!result.ok) {
    $('banner-text').textContent = `Could not re-enable: ${errorText(result.error)}`;
    $('banner').hidden = false;
  }
}
