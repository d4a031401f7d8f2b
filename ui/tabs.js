// The detail's tabs (WAI-ARIA tablist / tab / tabpanel): one panel shown at a time, the chosen tab kept
// from one capture to the next, as in a browser's network panel; arrow keys, Home and End move between
// tabs, as the ARIA pattern has it.

import { el } from './render.js';
import { scheduleRender, state } from './state.js';

export const TABS = [
  ['request', 'Request'],
  ['response', 'Response'],
  ['signature', 'Signature'],
  ['attempts', 'Attempts'],
  ['diff', 'Diff'],
];

/** Opens tab `name` (the next drawing shows it); `focus` puts the keyboard on it, as arrow keys do. */
export function openTab(name, { focus = false } = {}) {
  state.tab = name;
  state.focusTab = focus;
  scheduleRender({ detail: true });
}

function onKey(event) {
  const names = TABS.map(([name]) => name);
  const at = names.indexOf(state.tab);
  const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: names.length - 1 }[event.key];
  if (to === undefined) return;
  event.preventDefault();
  openTab(names[(to + names.length) % names.length], { focus: true });
}

/** The tab list and the open tab's panel, with `content(name)` in it. */
export function tabbed(content) {
  const current = state.tab ?? 'request';
  const list = el(
    'div',
    { role: 'tablist', 'aria-label': 'Capture detail', class: 'tabs', onkeydown: onKey },
    TABS.map(([name, label]) =>
      el(
        'button',
        {
          type: 'button',
          role: 'tab',
          id: `tab-${name}`,
          'aria-selected': String(name === current),
          'aria-controls': `panel-${name}`,
          tabindex: name === current ? '0' : '-1',
          onclick: () => openTab(name),
        },
        label,
      ),
    ),
  );
  const panel = el(
    'div',
    {
      role: 'tabpanel',
      id: `panel-${current}`,
      'aria-labelledby': `tab-${current}`,
      class: 'tab-panel',
      tabindex: '0',
    },
    content(current),
  );
  if (state.focusTab) {
    state.focusTab = false;
    requestAnimationFrame(() => document.getElementById(`tab-${current}`)?.focus());
  }
  return [list, panel];
}
