/**
 * Holds requests until `release()` (see ListenerOptions.held): each waits in `pass()`, which resolves
 * true once released, false when the listener closed first.
 */
export class Hold {
  #gate: Promise<boolean> | null;
  #open: ((released: boolean) => void) | null = null;
  /** Requests waiting now. */
  waiting = 0;

  constructor(held: boolean) {
    this.#gate = held ? new Promise((resolve) => (this.#open = resolve)) : null;
  }

  async pass(): Promise<boolean> {
    const gate = this.#gate;
    if (!gate) return true;
    this.waiting += 1;
    const released = await gate;
    this.waiting -= 1;
    return released;
  }

  /** Lets the requests held so far go on, and holds no more. */
  release(): void {
    this.#open?.(true);
    this.#open = null;
    this.#gate = null;
  }

  /** Turns away the requests held, and any still to come to a listener that was never released. */
  refuse(): void {
    this.#open?.(false);
    this.#open = null;
  }
}
