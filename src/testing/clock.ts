import { OptionError } from '../errors.js';
/**
 * The sandbox's timers under a test's hand: retries (the contract's retry table) and the receiver's time
 * limit come due when the test advances this clock, not when that much time has passed.
 */
export class ManualClock {
  #elapsed = 0;
  #next = 0;
  readonly #timers = new Map<number, { at: number; callback: () => void }>();

  /** Time advanced so far, in ms. */
  get elapsed(): number {
    return this.#elapsed;
  }

  readonly setTimer = (callback: () => void, delayMs: number): (() => void) => {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#elapsed + Math.max(0, delayMs), callback });
    // A timer due now runs at once, as setTimeout(…, 0) would: first attempts need no advance.
    if (delayMs <= 0) queueMicrotask(() => this.#fire(id));
    return () => this.#timers.delete(id);
  };

  /** Moves the clock `ms` forward, running every timer that comes due, in order. */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new OptionError(`advance(ms) takes 0 or more milliseconds (got ${ms}).`);
    const target = this.#elapsed + ms;
    for (;;) {
      const due = [...this.#timers.entries()].filter(([, t]) => t.at <= target).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.#elapsed = Math.max(this.#elapsed, due[1].at);
      this.#fire(due[0]);
      // Let what the timer started (an attempt's request) get under way before the next one.
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.#elapsed = target;
  }

  #fire(id: number): void {
    const timer = this.#timers.get(id);
    if (!timer) return;
    this.#timers.delete(id);
    timer.callback();
  }
}
