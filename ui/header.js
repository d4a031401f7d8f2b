// The header: the endpoint, where deliveries are forwarded, the mode, and the banner of an endpoint that gets nothing.
import { clear, el } from './render.js';
import { state, $ } from './state.js';
import { endpointActions } from './actions.js';
import { canReenable } from './endpoint.js';

export function renderHeader() {
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
        'span',
        { class: 'muted' },
        ` · events: ${(endpoint.enabledEvents ?? []).join(', ')}`,
        endpoint.secretHint ? ` · secret ${endpoint.secretHint}` : '',
      ),
    );
    // One line: what does not fit is cut, and whole on hover.
    node.title = node.textContent;
  } else node.append(el('span', { class: 'muted' }, 'none registered'));
  clear($('endpoint-actions'));
  $('endpoint-actions').append(...endpointActions().filter(Boolean));
  renderForwarding($('forward'), state.forwardTo);
  $('mode').textContent = state.mode ?? '–';
  const inactive = endpoint && endpoint.status !== 'enabled';
  $('banner').hidden = !inactive;
  $('reenable').hidden = !canReenable(endpoint);
  // Why it gets nothing, in clockhook's words (see endpointProblem).
  if (inactive) $('banner-text').textContent = endpoint.problem;
}

/** Where deliveries go: the app, or several routes summarised ("3 routes"), their table on click or focus. */
function renderForwarding(node, forwardTo) {
  clear(node);
  const routes = forwardTo ? forwardTo.split('; ') : [];
  if (routes.length < 2) {
    node.textContent = forwardTo ?? 'capture-only (clockhook answers 200)';
    node.title = node.textContent;
    return;
  }
  node.title = '';
  node.append(
    el(
      'details',
      { class: 'routes' },
      el('summary', {}, `${routes.length} routes`),
      el('ul', {}, ...routes.map((route) => el('li', { class: 'mono' }, route))),
    ),
  );
}
