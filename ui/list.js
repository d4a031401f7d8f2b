// The list of captures: filters, the search over the whole store, the chart, and moving through it.
import { BulkReplay } from './bulk.js';
import { ClearCaptures } from './clear.js';
import { drawChart } from './chart.js';
import { deliveryStoryOf, eventStoryOf, failedNow, keepStories, storyKey } from './story.js';
import { clear, el } from './render.js';
import { captureRow } from './row.js';
import { errorText, heldCapture, heldCaptures, scheduleRender, state, $ } from './state.js';
import { act } from './connection.js';
import { select } from './selection.js';

export const newestFirst = (a, b) => (a.id < b.id ? 1 : -1);

export function sortedCaptures() {
  return [...state.captures.values()].sort(newestFirst);
}

/** The search box's text as the filter compares it. */
export const searchText = () => $('search').value.trim().toLowerCase();

/** The listener's answer for the text now in the box (its matches, or why there are none), or null while there is none yet. */
export function searchAnswer() {
  const query = searchText();
  return query && state.search?.query === query ? state.search : null;
}

/** The matches the listener found for the text now in the box, or null. */
export const currentSearch = () => (searchAnswer()?.ids ? state.search : null);

/** The captures the list is made from: those held, and while searching, the older ones the listener found. */
export function listedCaptures() {
  return currentSearch() ? [...heldCaptures()].sort(newestFirst) : sortedCaptures();
}

export function matchesFilters(capture) {
  const type = $('type-filter').value;
  const status = $('status-filter').value;
  const query = searchText();
  if (type && capture.envelope?.type !== type) return false;
  if (status === 'failed' && !failedNow(capture)) return false;
  if (status === 'bad-signature' && !(capture.signature.status === 'invalid' || capture.signature.status === 'missing'))
    return false;
  if (status === 'replay' && capture.source !== 'replay') return false;
  if (status === 'duplicate' && deliveryStoryOf(capture)?.kind !== 'duplicate') return false;
  if (
    query &&
    !capture.body.toLowerCase().includes(query) &&
    !(capture.envelope?.id ?? '').toLowerCase().includes(query) &&
    !currentSearch()?.ids.has(capture.id)
  )
    return false;
  return true;
}

export function visibleCaptures() {
  return listedCaptures().filter(matchesFilters);
}

/**
 * The list's rows. By request: the captures shown. By event: one row per event id, the capture that
 * decides its state (its newest, a replay included: a replay the app took makes the event delivered) when
 * it is shown, else the newest shown, with how many captures of it are shown; a capture with no event id
 * is a row of its own.
 */
export function visibleRows(visible = visibleCaptures()) {
  if (state.view !== 'event') return visible.map((capture) => ({ capture, count: 1 }));
  const rows = new Map();
  for (const capture of visible) {
    const key = storyKey(capture);
    const row = rows.get(key);
    if (!row) rows.set(key, { capture, count: 1 });
    else {
      row.count += 1;
      if (eventStoryOf(capture)?.latest === capture.id) row.capture = capture;
    }
  }
  return [...rows.values()];
}

export function renderTypeFilter(captures) {
  const select = $('type-filter');
  const known = new Set([...select.options].map((o) => o.value));
  for (const type of new Set(captures.map((c) => c.envelope?.type).filter(Boolean))) {
    if (!known.has(type)) select.append(el('option', { value: type }, type));
  }
}

export function renderList() {
  const all = sortedCaptures();
  renderTypeFilter(all);
  drawChart($('chart'), all);
  const list = $('captures');
  clear(list);
  const visible = visibleCaptures();
  renderSearchNote();
  bulk.render($('bulk'), {
    shown: isNarrowed() ? [...new Set(visible.map(toResend))] : null,
    forwardTo: state.forwardTo,
  });
  clearing.render($('clear-bar'), { unpinned: all.filter((capture) => !capture.pinned).length, more: state.hasMore });
  for (const row of visibleRows(visible)) list.append(captureRow(row.capture, row.count));
  for (const button of document.querySelectorAll('#view button'))
    button.setAttribute('aria-pressed', String(button.dataset.view === state.view));
  $('empty').hidden = all.length > 0;
  $('older').hidden = !state.hasMore;
}

/**
 * What replaying a shown capture sends: for a failed event, its newest delivery from the service, as
 * `replay --failed` sends (an edited replay that failed is not sent again in its place).
 */
const toResend = (capture) => (failedNow(capture) && heldCapture(eventStoryOf(capture).resend)) || capture;

/** What a capture was for its event (see story.js), as clockhook said. */
export const storyOf = (id) => {
  const capture = heldCapture(id);
  return capture ? deliveryStoryOf(capture) : undefined;
};

/** Whether a filter or the search box narrows the list (only then is replaying all it shows offered). */
export const isNarrowed = () => Boolean($('type-filter').value || $('status-filter').value !== 'all' || searchText());

export const bulk = new BulkReplay({ act, errorText, changed: () => scheduleRender({}) });
export const clearing = new ClearCaptures({ act, errorText, changed: () => scheduleRender({}) });

let searchTimer = 0;
/** Filters what the page holds at once; asks the listener about the rest once typing pauses. */
export function searchChanged() {
  clearTimeout(searchTimer);
  const query = searchText();
  if (!query) state.search = null;
  else searchTimer = setTimeout(() => searchStore(query), 250);
  scheduleRender({});
}

export async function searchStore(query) {
  const result = await act({ type: 'search', query });
  if (searchText() !== query) return; // typed on meanwhile
  if (result.ok) keepStories(result.data.stories);
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
export function renderSearchNote() {
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

export function move(step) {
  const visible = visibleRows().map((row) => row.capture);
  if (visible.length === 0) return;
  const index = visible.findIndex((c) => c.id === state.selected);
  const next = visible[Math.min(visible.length - 1, Math.max(0, index === -1 ? 0 : index + step))];
  select(next.id);
  requestAnimationFrame(() =>
    document.querySelector(`.capture[data-id="${next.id}"]`)?.scrollIntoView({ block: 'nearest' }),
  );
}

/** Switches between the views by event and by request; the choice is kept for the next visit. */
export function setView(view) {
  state.view = view;
  try {
    localStorage.setItem('clockhook.view', view);
  } catch {
    // site data blocked: the choice lasts this visit
  }
  scheduleRender({});
}
