// An event's story on this side: each capture of its event id in order, labelled with what it was (as
// clockhook decided it, see story.js), with its time, status and duration; a click opens it. The service's own delivery_attempts
// and when it tries next follow in the Attempts tab.

import { storyOf } from './list.js';
import { statusChip } from './row.js';
import { el } from './render.js';
import { select } from './selection.js';
import { heldCaptures, state } from './state.js';

/** The timeline of the selected capture's event; null for a capture with no event id. */
export function timelineSection(capture) {
  const eventId = capture.envelope?.id;
  if (!eventId) return null;
  const captures = [...heldCaptures()]
    .filter((other) => other.envelope?.id === eventId)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  return [
    el('h3', {}, `This event here (${captures.length} ${captures.length === 1 ? 'capture' : 'captures'})`),
    el(
      'ol',
      { class: 'timeline' },
      captures.map((other) => {
        const story = storyOf(other.id);
        const words = story?.words ?? other.source;
        return el(
          'li',
          { class: other.id === state.selected ? 'current' : '' },
          statusChip(other),
          el('span', { class: 'muted' }, new Date(other.receivedAt).toLocaleTimeString()),
          other.id === state.selected
            ? el('span', { class: 'story' }, words)
            : el('button', { type: 'button', class: 'link story', onclick: () => select(other.id) }, words),
          el('span', { class: 'muted' }, other.forward ? `${other.forward.durationMs} ms` : ''),
        );
      }),
    ),
  ];
}
