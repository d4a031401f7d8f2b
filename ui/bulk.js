// Replaying the captures a narrowed list shows. Once a handler is fixed, what failed while it was broken
// is sent again: narrow the list (Failed forwards, a type, a search) and replay what it shows, one capture
// after the other, oldest first (the order the service sent them in), each re-signed as Replay does. It is
// offered only on a narrowed list, and asks first, naming the count and the app, so that one click cannot
// send the whole store again. Beside it, Save as scenario downloads what the list shows as one scenario.
import { ActionBar } from './bar.js';
import { clear, el, saveScenario } from './render.js';

/** Errors after which nothing more can be replayed; the others concern one capture (gone, its body unreadable). */
const STOPS = new Set(['disconnected', 'no_forward_target', 'no_secret', 'listener_closing']);

export class BulkReplay extends ActionBar {
  /**
   * null, or { phase: 'confirm' | 'running' | 'done', ids (oldest first, fixed when asked), sent,
   * answered2xx, notSent, error, stopping }.
   */
  #run = null;
  /** The captures the list shows at the last render: what a click asks to replay. */
  #shown = null;

  /**
   * The bar in `node`. `shown`: the captures the list shows, newest first, when it is narrowed (null
   * when it is not); `forwardTo`: the app, or null in capture-only mode, where nothing can be replayed.
   */
  render(node, { shown, forwardTo }) {
    this.#shown = shown;
    const run = this.#run;
    const some = !run && shown !== null && shown.length > 0;
    const offer = some && Boolean(forwardTo);
    const said = JSON.stringify([run, some && shown.length, forwardTo, this.#saveError]);
    if (!this.saysSomethingNew(said)) return;
    clear(node);
    node.hidden = !run && !some;
    // What the list shows, as one scenario to play again (clockhook replay --scenario), in capture-only mode too.
    if (some) node.append(el('button', { type: 'button', onclick: () => this.#save() }, 'Save as scenario'));
    if (this.#saveError) node.append(el('span', { role: 'alert' }, `Not saved: ${this.#saveError}`));
    if (offer) {
      const ask = () => {
        const ids = (this.#shown ?? []).map((c) => c.id).reverse(); // the list is newest first
        this.#update({ phase: 'confirm', ids, sent: 0, answered2xx: 0, notSent: 0, error: null, stopping: false });
      };
      node.append(el('button', { type: 'button', onclick: ask }, `Replay the ${shown.length} shown…`));
    } else if (run?.phase === 'confirm') {
      node.append(
        el(
          'span',
          {},
          `Replay ${run.ids.length === 1 ? 'this capture' : `these ${run.ids.length} captures`} to ${forwardTo}, oldest first, each re-signed?`,
        ),
        el('button', { type: 'button', onclick: () => this.#start() }, `Replay ${run.ids.length}`),
        el('button', { type: 'button', onclick: () => this.#update(null) }, 'Cancel'),
      );
    } else if (run?.phase === 'running') {
      const stop = () => {
        run.stopping = true;
        this.changed();
      };
      node.append(
        el('span', {}, `Replaying ${run.sent + run.notSent + 1} of ${run.ids.length}…`),
        el('button', { type: 'button', onclick: stop, disabled: run.stopping }, run.stopping ? 'Stopping…' : 'Stop'),
      );
    } else if (run?.phase === 'done') {
      node.append(
        el('span', {}, summary(run)),
        el('button', { type: 'button', onclick: () => this.#update(null) }, 'OK'),
      );
    }
  }

  /** Why the last Save as scenario did not save; null when it did. */
  #saveError = null;

  async #save() {
    const ids = (this.#shown ?? []).map((c) => c.id).reverse(); // oldest first, as they came
    const result = await saveScenario(this.act, { captureIds: ids }, `clockhook-${ids.length}`);
    this.#saveError = result.ok ? null : this.errorText(result.error);
    this.changed();
  }

  #update(run) {
    this.#run = run;
    this.changed();
  }

  async #start() {
    const run = this.#run;
    if (run?.phase !== 'confirm') return; // a second click before the bar changed
    run.phase = 'running';
    this.changed();
    for (const captureId of run.ids) {
      if (run.stopping) break;
      const result = await this.act({ type: 'replay', captureId, mode: 'resign' });
      if (result.ok) {
        run.sent += 1;
        // As clockhook judged the replay: a 200 cut short did not land.
        if (result.data.story?.outcome === '2xx') run.answered2xx += 1;
      } else {
        run.notSent += 1;
        run.error = this.errorText(result.error);
        if (STOPS.has(result.error.code)) break;
      }
      this.changed();
    }
    run.phase = 'done';
    this.changed();
  }
}

function summary({ ids, sent, answered2xx, notSent, error }) {
  const head =
    sent + notSent === ids.length
      ? `Replayed ${sent} of ${ids.length}`
      : `Stopped after ${sent + notSent} of ${ids.length}`;
  const answers =
    sent > 0 ? `: ${answered2xx} answered 2xx${sent > answered2xx ? `, ${sent - answered2xx} did not` : ''}` : '';
  const failures = notSent > 0 ? `. ${notSent} could not be replayed (the last: ${error})` : '';
  return `${head}${answers}${failures}.`;
}
