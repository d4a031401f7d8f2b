// Compare two captures: a JSON-aware diff of the bodies (each path with its old and new value) and a
// diff of the headers. By default the selected capture is compared with what it most likely follows:
// for a replay, the capture it replays; else the previous delivery of the same event; else the previous
// capture of the same type. Any other capture the page holds can be picked by hand.

import { parsedBody } from './editor.js';
import { headerDiff, jsonDiff } from './shared/json-diff.js';
import { newestFirst } from './list.js';
import { el } from './render.js';
import { heldCaptures, scheduleRender, state } from './state.js';

/** The capture the selected one is compared with by default, or null. */
export function defaultOther(capture) {
  const held = [...heldCaptures()];
  if (capture.replayOf) {
    const original = held.find((other) => other.id === capture.replayOf);
    if (original) return original;
  }
  const earlier = held.filter((other) => other.id < capture.id).sort(newestFirst);
  const eventId = capture.envelope?.id;
  const type = capture.envelope?.type;
  return (
    (eventId && earlier.find((other) => other.envelope?.id === eventId)) ||
    (type && earlier.find((other) => other.envelope?.type === type)) ||
    null
  );
}

const shown = (value) => (value === undefined ? '(absent)' : JSON.stringify(value));

function diffTable(rows, what) {
  if (rows.length === 0) return el('p', { class: 'muted' }, `The ${what} are the same.`);
  return el(
    'table',
    { class: 'diff' },
    el('tr', {}, el('th', {}, 'Path'), el('th', {}, 'Before'), el('th', {}, 'After')),
    rows.map((row) =>
      el(
        'tr',
        {},
        el('td', { class: 'mono' }, row.path),
        el(
          'td',
          { class: 'mono del' },
          typeof row.before === 'string' && what === 'headers' ? row.before : shown(row.before),
        ),
        el(
          'td',
          { class: 'mono ins' },
          typeof row.after === 'string' && what === 'headers' ? row.after : shown(row.after),
        ),
      ),
    ),
  );
}

const describe = (capture) =>
  `${new Date(capture.receivedAt).toLocaleTimeString()} · ${capture.envelope?.type ?? `${capture.method} ${capture.path}`} · ${capture.id}`;

/** The Diff tab: what to compare with, then the bodies' and the headers' differences. */
export function diffSection(capture) {
  const chosen = state.compareWith.get(capture.id);
  const held = [...heldCaptures()].filter((other) => other.id !== capture.id).sort(newestFirst);
  const other = (chosen && held.find((c) => c.id === chosen)) || defaultOther(capture);
  const picker = el(
    'select',
    {
      id: 'diff-with',
      'aria-label': 'Compare with',
      oninput: (event) => {
        state.compareWith.set(capture.id, event.target.value);
        scheduleRender({ detail: true });
      },
    },
    el('option', { value: '' }, 'Pick a capture to compare with…'),
    held.slice(0, 500).map((c) => el('option', { value: c.id, selected: c.id === other?.id }, describe(c))),
  );
  const head = el('div', { class: 'diff-head' }, el('label', { for: 'diff-with' }, 'Compare with '), picker);
  if (!other) return [head, el('p', { class: 'muted' }, 'No earlier capture of this event or type: pick one above.')];
  const before = parsedBody(other);
  const after = parsedBody(capture);
  const bodies =
    before !== undefined && after !== undefined
      ? diffTable(jsonDiff(before, after), 'bodies')
      : el(
          'p',
          { class: 'muted' },
          other.body === capture.body ? 'The bodies are the same bytes.' : 'The bodies differ (not both JSON).',
        );
  return [
    head,
    el('h3', {}, 'Body'),
    bodies,
    el('h3', {}, 'Headers'),
    diffTable(headerDiff(other.headers, capture.headers), 'headers'),
  ];
}
