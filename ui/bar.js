// What the bars under the filters share (Replay the N shown…, Clear…): each asks before an action on many
// captures, then says how it went, and is drawn again only when what it says changes.

export class ActionBar {
  /** What the bar says now: the list renders on every capture, the bar's buttons only when this changes. */
  #said = '';

  /**
   * `act` sends an action to the listener and resolves with its result; `errorText` words an error;
   * `changed` is told when the bar has something new to say.
   */
  constructor({ act, errorText, changed }) {
    this.act = act;
    this.errorText = errorText;
    this.changed = changed;
  }

  /**
   * Whether `said` (what the bar would say, as a string) differs from what it says now; it then says it,
   * and the caller draws the bar again. A button redrawn under the pointer would lose the click.
   */
  saysSomethingNew(said) {
    if (said === this.#said) return false;
    this.#said = said;
    return true;
  }
}
