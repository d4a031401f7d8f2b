import { clear, el } from './render.js';

/** What the service does next with a missed event, in the story's words (see missedWords), the time put in. */
function outlookText({ outlook, words }) {
  const dueAt = outlook.next === 'attempt' ? (outlook.dueAt ?? null) : null;
  return dueAt === null ? words.text : words.text.replace('{at}', new Date(dueAt).toLocaleTimeString());
}

/**
 * "Missed while away": the events that came while listen was off and did not reach its endpoint, apart
 * from the captures until they arrive, with Redeliver (through the API, as `listen --catch-up`).
 * `act` sends an action to listen and resolves with its result.
 */
export function renderMissed(node, missed, act) {
  // Open on a wide screen, a strip on a narrow one; as the reader left it when the list changes.
  const was = node.querySelector('details');
  const open = was ? was.open : !matchMedia('(max-width: 700px)').matches;
  clear(node);
  node.hidden = missed.length === 0;
  if (missed.length === 0) return;
  const said = el('p', { className: 'muted', role: 'status' });
  const redeliver = async (yes) => {
    button.disabled = true;
    const result = await act({ type: 'catch-up', yes });
    button.disabled = false;
    if (!result.ok) {
      said.textContent = `Could not redeliver: ${result.error.message}`;
      return;
    }
    if (result.data.needsConfirm) {
      // A redelivery goes to every enabled endpoint subscribed to the event (contract, rule 3).
      if (window.confirm(`Redeliver ${missed.length}? ${result.data.reach}.`)) await redeliver(true);
      return;
    }
    said.textContent = `Redelivered ${result.data.redelivered.length}: they arrive as deliveries.`;
  };
  const button = el('button', { type: 'button', onclick: () => redeliver(false) }, `Redeliver ${missed.length}`);
  const details = el(
    'details',
    {},
    el('summary', {}, el('h2', {}, `Missed while away (${missed.length})`)),
    el(
      'ul',
      {},
      ...missed.map((m) =>
        el('li', {}, el('strong', {}, m.type), ' ', el('code', {}, m.eventId), ` · ${outlookText(m)}`),
      ),
    ),
    button,
    said,
  );
  details.open = open;
  node.append(details);
}
