// Clear removes every capture that is not pinned from the store, for good. It sits at the end of the
// filters' row, where a click meant to clear the search or the filters would otherwise empty the store
// at once: so it asks first, saying how many captures would go.
import { ActionBar } from './bar.js';
import { clear, el } from './render.js';

export class ClearCaptures extends ActionBar {
  /** null, 'asking' (the bar asks), 'clearing' (sent, not answered yet), or the text of a failure. */
  #state = null;

  /** The Clear button was clicked: the bar asks. */
  ask() {
    this.#update('asking');
  }

  /**
   * The bar in `node`. `unpinned`: the captures the page holds that are not pinned; `more`: whether the
   * store holds older ones the page has not loaded.
   */
  render(node, { unpinned, more }) {
    const state = this.#state;
    const said = JSON.stringify([state, unpinned, more]);
    if (!this.saysSomethingNew(said)) return;
    clear(node);
    node.hidden = state === null;
    const cancel = () => this.#update(null);
    if (state === 'asking' && unpinned === 0 && !more) {
      node.append(
        el('span', {}, 'Nothing to clear: every capture is pinned.'),
        el('button', { type: 'button', onclick: cancel }, 'OK'),
      );
    } else if (state === 'asking') {
      const count = `${unpinned}${more ? ' and the older ones' : ''}`;
      node.append(
        el(
          'span',
          {},
          `Remove ${unpinned === 1 && !more ? 'the capture' : `the ${count} captures`} that ${unpinned === 1 && !more ? 'is' : 'are'} not pinned from the store? They cannot be brought back.`,
        ),
        el('button', { type: 'button', onclick: () => this.#clear() }, 'Remove'),
        el('button', { type: 'button', onclick: cancel }, 'Cancel'),
      );
    } else if (state === 'clearing') {
      node.append(el('span', {}, 'Clearing…'));
    } else if (state !== null) {
      node.append(el('span', {}, state), el('button', { type: 'button', onclick: cancel }, 'OK'));
    }
  }

  #update(state) {
    this.#state = state;
    this.changed();
  }

  async #clear() {
    if (this.#state !== 'asking') return; // a second click before the bar changed
    this.#update('clearing');
    const result = await this.act({ type: 'clear' });
    this.#update(result.ok ? null : `Could not clear: ${this.errorText(result.error)}`);
  }
}
