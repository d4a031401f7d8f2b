import type { Logger } from '../logger.js';
import { type RelayBus, REDIS_KEYS } from './bus.js';
import { FileKeyStore, hashKey, type KeyStore, type RelayKey, type UsageFile } from './keys.js';

/** A listener's key, as the relay judged it: the key's id (null on a relay without keys), or a refusal. */
export type Admission = { keyId: string | null } | { status: number; message: string };

const HOW_TO_GET_ONE =
  "Ask the relay's operator for a key (they run: clockhook relay keys add <your name>), then give it to listen with --relay-key <key> or CLOCKHOOK_RELAY_KEY.";

/**
 * Admits listeners by access key, and counts each key's requests. The keys are read again every few
 * seconds and at once when another instance announces a change; a key revoked there has its listeners
 * let go here (`onInvalid`). Once keys are in use they stay required: a store found empty afterwards
 * (Redis restarted without persistence, say) refuses everyone until keys are added again.
 */
export class KeyGate {
  readonly #store: KeyStore | null;
  readonly #logger: Logger;
  readonly #onInvalid: (valid: (keyId: string) => boolean) => void;
  #byHash = new Map<string, RelayKey>();
  #required: boolean;
  #saidEmpty = false;
  /** Requests per key id and minute, not yet written to the store. */
  #counts = new Map<string, Map<number, number>>();
  /** For a keys file: the last hour's counts, rewritten whole when they change. */
  #hour = new Map<string, Map<number, number>>();
  #lastUsage = '';

  constructor(store: KeyStore | null, logger: Logger, onInvalid: (valid: (keyId: string) => boolean) => void) {
    this.#store = store;
    this.#logger = logger;
    this.#onInvalid = onInvalid;
    this.#required = store instanceof FileKeyStore;
  }

  get required(): boolean {
    return this.#required;
  }

  /** Reads the keys again; on a failure the keys known before stay in force. */
  async refresh(): Promise<void> {
    if (!this.#store) return;
    let keys: RelayKey[];
    try {
      keys = await this.#store.list();
    } catch (error) {
      this.#logger.warn(`Could not read the access keys (${(error as Error).message}); the keys read before apply.`);
      return;
    }
    if (keys.length > 0) this.#required = true;
    if (keys.length === 0 && this.#required && !this.#saidEmpty) {
      this.#logger.error(
        this.#store instanceof FileKeyStore
          ? `${this.#store.path} holds no access key yet: every listener is refused until one is added (clockhook relay keys add <name> --keys ${this.#store.path}).`
          : 'Redis holds no access keys any more (restarted without persistence?): every listener is refused until keys are added again (clockhook relay keys add <name> --redis …).',
      );
    }
    this.#saidEmpty = keys.length === 0;
    this.#byHash = new Map(keys.map((key) => [key.hash, key]));
    const valid = new Set(keys.filter((key) => !key.revokedAt).map((key) => key.id));
    this.#onInvalid((keyId) => valid.has(keyId));
  }

  /** Whether the key a listener presented (undefined: none) lets it open a channel. */
  admit(presented: string | undefined): Admission {
    if (!this.#required) return { keyId: null };
    if (!presented)
      return { status: 403, message: `This relay admits listeners with an access key only. ${HOW_TO_GET_ONE}` };
    const key = this.#byHash.get(hashKey(presented));
    if (!key) return { status: 403, message: `The relay does not know the access key given. ${HOW_TO_GET_ONE}` };
    if (key.revokedAt) {
      const message = `The access key given (${key.name}) was revoked at ${key.revokedAt}. ${HOW_TO_GET_ONE}`;
      return { status: 403, message };
    }
    return { keyId: key.id };
  }

  /** Counts one request to a channel of key `keyId`. */
  count(keyId: string | null): void {
    if (!keyId) return;
    const minute = Math.floor(Date.now() / 60_000);
    const minutes = this.#counts.get(keyId) ?? new Map<number, number>();
    minutes.set(minute, (minutes.get(minute) ?? 0) + 1);
    this.#counts.set(keyId, minutes);
  }

  /**
   * Writes the counts since the last flush: to Redis as per-minute counters that expire after the hour,
   * or to the keys file's usage file with `channels` (each key's channels now).
   */
  async flush(bus: RelayBus | null, channels: (keyId: string) => number): Promise<void> {
    const counts = this.#counts;
    this.#counts = new Map();
    if (bus) {
      const writes = [...counts].flatMap(([keyId, minutes]) =>
        [...minutes].map(([minute, count]) =>
          bus.call((c) =>
            c
              .multi()
              .incrBy(REDIS_KEYS.keyRequests(keyId, minute), count)
              .expire(REDIS_KEYS.keyRequests(keyId, minute), 3700)
              .exec(),
          ),
        ),
      );
      await Promise.all(writes);
      return;
    }
    if (!(this.#store instanceof FileKeyStore)) return;
    const hourAgo = Math.floor(Date.now() / 60_000) - 60;
    for (const [keyId, minutes] of counts) {
      const kept = this.#hour.get(keyId) ?? new Map<number, number>();
      for (const [minute, count] of minutes) kept.set(minute, (kept.get(minute) ?? 0) + count);
      this.#hour.set(keyId, kept);
    }
    const usage: UsageFile = {};
    for (const key of this.#byHash.values()) {
      const minutes = [...(this.#hour.get(key.id) ?? [])].filter(([minute]) => minute > hourAgo);
      usage[key.id] = { channels: channels(key.id), minutes: Object.fromEntries(minutes) };
    }
    const text = JSON.stringify(usage);
    if (text === this.#lastUsage) return;
    this.#lastUsage = text;
    await this.#store.writeUsage(usage);
  }
}
