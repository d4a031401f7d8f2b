import { type ApiClient, ApiError } from '../api/index.js';
import type { WebhookEndpoint } from '../contract/index.js';
import type { Logger } from '../logger.js';
import { DISABLES_AFTER } from '../story/index.js';

/**
 * The status the watch gives an endpoint the API no longer has: not one of the service's (the contract
 * lists enabled and disabled), but what listen and its page say of it.
 */
export const DELETED = 'deleted';

export interface EndpointWatchOptions {
  client: ApiClient | null;
  endpoint: WebhookEndpoint | null;
  logger: Logger;
  now: () => number;
  /** How long after a failed delivery to read the endpoint: the service updates it once the attempt is over. @default 2000 */
  settleMs?: number;
  /** Reads at most this often, so a burst of failures costs one request, not one each. @default 30 s (a read interval of clockhook's, not a contract number) */
  minIntervalMs?: number;
}

/**
 * The endpoint as this run last read it. The service disables an endpoint after 10 failed deliveries in
 * a row and then sends it nothing, which a developer at a terminal would otherwise learn only from the
 * silence. So a failed delivery has the endpoint read again a moment later, and a change of its status is
 * logged, whoever saw it: that read, the inspector's poll, or its Re-enable button.
 */
export class EndpointWatch {
  readonly #options: EndpointWatchOptions;
  #current: WebhookEndpoint | null;
  #timer: NodeJS.Timeout | null = null;
  #lastReadAt = Number.NEGATIVE_INFINITY;
  /** Ends a read in flight at close, so that its retries do not outlive the run. */
  readonly #closing = new AbortController();

  constructor(options: EndpointWatchOptions) {
    this.#options = options;
    this.#current = options.endpoint;
  }

  get current(): WebhookEndpoint | null {
    return this.#current;
  }

  set(next: WebhookEndpoint): void {
    const before = this.#current;
    this.#current = next;
    if (!before || before.status === next.status) return;
    const { logger } = this.#options;
    if (next.status === DELETED) {
      logger.warn(
        `Endpoint ${next.id} was deleted (npx clockhook endpoints delete, or the service's dashboard): the service sends nothing here any more. Restart listen to register a new one; its secret is new, so give it to your app again.`,
      );
    } else if (next.status === 'disabled') {
      logger.warn(
        `Endpoint ${next.id} is now disabled: ${DISABLES_AFTER}. Fix what failed, re-enable it (npx clockhook endpoints enable ${next.id}, or Re-enable in the inspector), and send what it missed again with npx clockhook events redeliver <event id>.`,
      );
    } else if (next.status === 'enabled')
      logger.warn(`Endpoint ${next.id} is enabled again; the service delivers to it.`);
    else logger.warn(`Endpoint ${next.id} is now ${next.status} (it was ${before.status}).`);
  }

  /** Reads the endpoint from the API (none to read offline, nor once it was deleted). */
  async read(): Promise<WebhookEndpoint | null> {
    const { client } = this.#options;
    const current = this.#current;
    if (client && current && current.status !== DELETED) {
      this.#lastReadAt = this.#options.now();
      try {
        this.set(await client.getEndpoint(current.id, { signal: this.#closing.signal }));
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'resource_not_found')) throw error;
        // Shown as it was, marked deleted: the page and the log say so, instead of its last status.
        this.set({ ...current, status: DELETED });
      }
    }
    return this.#current;
  }

  /** A delivery was answered with something other than 2xx: the endpoint is read again soon. */
  deliveryFailed(): void {
    if (this.#timer || !this.#options.client || !this.#current || this.#closing.signal.aborted) return;
    const { settleMs = 2000, minIntervalMs = 30 * 1000 } = this.#options;
    const waitMs = Math.max(settleMs, this.#lastReadAt + minIntervalMs - this.#options.now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      // A read that fails (the service unreachable) leaves what was known; the next failure tries again.
      this.read().catch(() => undefined);
    }, waitMs);
    this.#timer.unref();
  }

  close(): void {
    this.#closing.abort();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
