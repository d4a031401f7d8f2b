// The inspector page: wires the modules together, applies what clockhook sends, and takes the keyboard.
import { renderMissed } from './missed.js';
import { keepStories } from './story.js';
import { answered, heldCapture, onRender, scheduleRender, state, $ } from './state.js';
import { act, connect, pending, send } from './connection.js';
import { renderHeader } from './header.js';
import { clearing, move, renderList, searchChanged, searchStore, searchText, setView } from './list.js';
import { loadWholeBody, restorePlace, select, setEditing } from './selection.js';
import { openTab } from './tabs.js';
import { deliveryAnswered } from './attempts.js';
import { reenable, replay } from './actions.js';
import { renderDetail } from './detail.js';
import { initSplitter } from './splitter.js';

const NARROW = matchMedia('(max-width: 700px)');
initSplitter(document.querySelector('.layout'), $('splitter'));
// On a narrow screen the filters and the chart fold behind a button.
$('filters-toggle').addEventListener('click', () => {
  const open = document.body.classList.toggle('filters-open');
  $('filters-toggle').setAttribute('aria-expanded', String(open));
});

/** listen holds deliveries for an app that is not answering (restarting, say): said until it is back. */
function showAppState({ state, target, waitMs, exited }) {
  const note = $('app-state');
  note.hidden = state !== 'down';
  const held = `deliveries are held for up to ${waitMs / 1000} s each`;
  note.textContent =
    state !== 'down'
      ? ''
      : exited
        ? `The app listen started, ${exited}: ${held}, then answered 502, until it answers at ${target} again.`
        : `The app at ${target} is not answering: ${held} while it restarts (--wait-for-app).`;
}

function receive(message) {
  switch (message.type) {
    case 'snapshot':
      state.captures = new Map(message.captures.map((c) => [c.id, c]));
      state.stories = new Map();
      keepStories(message.stories);
      state.hasMore = message.hasMore;
      state.oldestLoaded = message.captures.at(-1)?.id ?? null;
      state.endpoint = message.endpoint;
      state.mode = message.mode;
      state.forwardTo = message.forwardTo;
      state.listener = message.listener;
      state.traceUrl = message.traceUrl ?? null;
      renderMissed($('missed'), message.missed ?? [], act);
      // An app still down is said again right after the snapshot.
      showAppState({ state: 'up' });
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
      keepStories([message.story]);
      if (!(previous && answered(previous)) && answered(message.capture)) deliveryAnswered(message.capture);
      // The selected capture's event gets a new capture: its timeline (and diff) change too.
      const eventId = message.capture.envelope?.id;
      const shown = heldCapture(state.selected);
      scheduleRender({ detail: message.capture.id === state.selected || (eventId && shown?.envelope?.id === eventId) });
      break;
    }
    case 'history':
      for (const capture of message.captures) state.captures.set(capture.id, capture);
      keepStories(message.stories);
      state.hasMore = message.hasMore;
      state.oldestLoaded = message.captures.at(-1)?.id ?? state.oldestLoaded;
      restorePlace();
      scheduleRender({});
      break;
    case 'missed':
      renderMissed($('missed'), message.missed, act);
      break;
    case 'app':
      showAppState(message);
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

/**
 * The keys, as in Gmail and GitHub: j/k or the arrows move, Enter opens the detail, r replays, e edits,
 * d diffs, / searches, ? shows them. Not while typing, and not with a modifier (the browser's own).
 */
const KEYS = {
  ArrowDown: () => move(1),
  j: () => move(1),
  ArrowUp: () => move(-1),
  k: () => move(-1),
  Enter: () => document.querySelector('#detail [role="tab"][aria-selected="true"]')?.focus(),
  r: () => {
    const capture = heldCapture(state.selected);
    if (capture && state.forwardTo) replay(capture, 'resign');
  },
  e: () => {
    if (!state.selected || !state.forwardTo) return;
    setEditing(state.selected);
    scheduleRender({ detail: true });
  },
  d: () => state.selected && openTab('diff'),
  // As on GitHub and in most web apps: / goes to the search box.
  '/': () => $('search').focus(),
  '?': () => $('keys').showModal(),
  // On a narrow screen the detail is a view of its own: Escape goes back to the list, as its Back does.
  Escape: () => NARROW.matches && state.selected && select(null),
};

document.addEventListener('keydown', (event) => {
  const typing = event.target instanceof HTMLElement && ['INPUT', 'TEXTAREA', 'SELECT'].includes(event.target.tagName);
  if (typing || event.metaKey || event.ctrlKey || event.altKey || $('keys').open) return;
  // Enter on a button or a tab is that control's own.
  if (event.key === 'Enter' && event.target instanceof HTMLElement && event.target.closest('button, a, [role="tab"]'))
    return;
  const action = Object.hasOwn(KEYS, event.key) ? KEYS[event.key] : null;
  if (!action) return;
  action();
  event.preventDefault();
});

for (const id of ['type-filter', 'status-filter']) $(id).addEventListener('input', () => scheduleRender({}));
$('search').addEventListener('input', searchChanged);
for (const button of document.querySelectorAll('#view button'))
  button.addEventListener('click', () => setView(button.dataset.view));
$('clear').addEventListener('click', () => clearing.ask());
$('reenable').addEventListener('click', reenable);
$('older').addEventListener('click', () => {
  if (state.oldestLoaded) send({ type: 'history', before: state.oldestLoaded });
});
setInterval(() => scheduleRender({}), 30_000); // the chart's minutes move on

/**
 * The page's token was refused (a URL from an earlier run whose token file was removed, or mistyped): one
 * message, what happened and what to do, and nothing about endpoints or forwarding, which it cannot know.
 */
function showRefused(what) {
  document.body.classList.add('refused');
  $('refused-text').textContent =
    `${what} Open the inspector URL that clockhook listen printed (it carries the page's token); \`npx clockhook listen\` prints it again when it starts.`;
  $('refused').hidden = false;
}

onRender({ header: renderHeader, list: renderList, detail: renderDetail });
connect(receive, showRefused);
