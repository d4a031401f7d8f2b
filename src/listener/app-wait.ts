import type { ClientRequest } from 'node:http';
import { LIMITS } from '../contract/index.js';

/** The service gives a delivery 30 s (the contract's limit): a wait for the app must end well before it. */
export const SERVICE_LIMIT_SECONDS = LIMITS.receiverTimeoutMs / 1000;
/** How long a delivery waits for an app that is not answering, by default (`--wait-for-app`). */
export const DEFAULT_WAIT_FOR_APP_MS = 10_000;

/** What listen is told when the app stops answering, and when it is back. */
export type AppStateEvent =
  /** `exited`: the app listen started exited (`listen -- <command>`), in words. */
  | { state: 'down'; target: string; waitMs: number; exited?: string }
  | { state: 'up'; target: string; downMs: number; delivered: number };

/** Tries again after 100 ms, 200, 400, 800, then each second: an app restarting (a file watcher) is back within a second or two. */
const backoffMs = (attempt: number) => Math.min(100 * 2 ** (attempt - 1), 1_000);

/**
 * Whether a failed forward cannot have reached the app, so that sending it again cannot give the app a
 * delivery twice: nothing listened on the port (ECONNREFUSED), or a new connection was reset before a byte of
 * the request was written. A reset after that, or on a kept-alive connection, may have been a crash while
 * handling it: that one is not waited for.
 */
export function appCannotHaveSeen(error: NodeJS.ErrnoException, proxyReq: ClientRequest | undefined): boolean {
  if (error.code === 'ECONNREFUSED') return true;
  return (
    error.code === 'ECONNRESET' &&
    proxyReq !== undefined &&
    !proxyReq.reusedSocket &&
    proxyReq.socket?.bytesWritten === 0
  );
}

/**
 * Waiting for an app that is not answering (restarting on a save, say), per forward target: each delivery that
 * finds it down is held and tried again with a short backoff, for up to `waitMs`, before the sender is answered
 * 502. That it went down is said once, and once it answers again, that it is back with how many it delivered;
 * the deliveries held then go at once, without waiting out their backoff.
 */
export class AppWait {
  #down: { since: number; held: number } | null = null;
  readonly #waiting = new Set<() => void>();
  #closed = false;

  constructor(
    readonly target: string,
    readonly waitMs: number,
    private readonly onState: (event: AppStateEvent) => void,
  ) {}

  /**
   * A delivery found the app not answering, `waitedMs` after its first try (its `attempt`th failure): resolves
   * true when it is to be sent again (after a backoff, or at once when the app is back), false once its wait is over.
   */
  async hold(waitedMs: number, attempt: number): Promise<boolean> {
    if (waitedMs >= this.waitMs || this.#closed) return false;
    if (!this.#down) {
      this.#down = { since: performance.now(), held: 0 };
      this.onState({ state: 'down', target: this.target, waitMs: this.waitMs });
    }
    if (attempt === 1) this.#down.held += 1;
    const delay = Math.min(backoffMs(attempt), this.waitMs - waitedMs);
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, delay);
      this.#waiting.add(wake);
    });
    return !this.#closed;
  }

  /** A delivery held for the app gave up (its wait is over): it is not among those delivered once the app is back. */
  gaveUp(): void {
    if (this.#down) this.#down.held -= 1;
  }

  /** The app answered: if it had been down, it is back, and the deliveries held go now. */
  answered(): void {
    const down = this.#down;
    if (!down) return;
    this.#down = null;
    const downMs = Math.round(performance.now() - down.since);
    this.onState({ state: 'up', target: this.target, downMs, delivered: down.held });
    for (const wake of [...this.#waiting]) wake();
  }

  /** listen is stopping: every delivery held is answered now (502), and none is held again. */
  close(): void {
    this.#closed = true;
    for (const wake of [...this.#waiting]) wake();
  }
}
