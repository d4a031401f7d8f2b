import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { RelayMetrics } from './metrics.js';
import { CLAIM_KEYS, Claims } from './claims.js';
import { type Redis, redisClient } from './redis.js';

export { redisClient };
import { packBinary, unpackBinary } from './protocol.js';

type HeaderMap = Record<string, string | string[]>;

/**
 * What Redis holds for a relay of several instances. Key names carry channel ids (public: they are in the
 * channel URLs), instance ids and key ids, never a token, an access key or a body. The claims' keys: claims.ts.
 */
const PREFIX = 'clockhook:relay:';
/** How long a stopping relay waits for Redis, per step. */
const STOP_MS = 1000;
export const REDIS_KEYS = {
  /** Pub/sub: requests and answers for one instance. */
  inbox: (id: string) => `${PREFIX}inbox:${id}`,
  /** Pub/sub: the access keys changed. */
  broadcast: `${PREFIX}broadcast`,
  /** Hash: access key id -> its record (name, hash of the key, dates). */
  keys: `${PREFIX}keys`,
  /** Counter: requests to an access key's channels in one minute. */
  keyRequests: (keyId: string, minute: number) => `${PREFIX}key-requests:${keyId}:${minute}`,
  ...CLAIM_KEYS,
};

/** A request sent to the instance that holds its channel. */
export interface RemoteRequest {
  channel: string;
  method: string;
  path: string;
  headers: HeaderMap;
  body: Buffer;
}

/** What came back from the holder: its listener's answer, or why there is none. */
export type RemoteOutcome =
  | { kind: 'answered'; status: number; headers: HeaderMap; body: Buffer }
  | { kind: 'gone' | 'timeout' | 'full' | 'busy' | 'key-full' | 'unreachable' };

export interface BusHandlers {
  /** A request from another instance for a channel this one holds. */
  request(request: RemoteRequest): Promise<RemoteOutcome>;
  /** Another instance took this channel's listener over. */
  replaced(channel: string): void;
  /** Access keys were added or revoked. */
  keysChanged(): void;
  /** Redis came back after an outage (the claims were renewed). */
  recovered(): void;
}

interface Waiting {
  holder: string;
  resolve(outcome: RemoteOutcome): void;
}

/**
 * The instances' shared state and messages, on Redis: who holds each channel, and requests and answers
 * between instances over pub/sub (bodies only in flight, never in a key). Two connections: one for
 * commands, one subscribed to this instance's inbox and the broadcast. Commands fail at once while Redis
 * is away (no offline queue), so a sender gets 503 then instead of waiting.
 */
export class RelayBus {
  readonly id = randomBytes(6).toString('hex');
  /** Which channels this instance holds, on Redis. */
  readonly claims: Claims;
  readonly #client: Redis;
  readonly #subscriber: Redis;
  readonly #logger: Logger;
  readonly #metrics: RelayMetrics;
  readonly #url: string;
  readonly #waiting = new Map<number, Waiting>();
  /** Holders found lately, by channel (see holderOf). */
  readonly #holders = new Map<string, { holder: string; until: number }>();
  #handlers: BusHandlers | null = null;
  #nextId = 0;
  #up = false;
  #everUp = false;
  #watchdog: NodeJS.Timeout | undefined;

  /** A bus on the Redis at `url` (its client loaded now); `start` it. */
  static async open(url: string, logger: Logger, metrics: RelayMetrics): Promise<RelayBus> {
    return new RelayBus(url, logger, metrics, await redisClient(url, true));
  }

  private constructor(url: string, logger: Logger, metrics: RelayMetrics, client: Redis) {
    this.#url = url;
    this.#logger = logger;
    this.#metrics = metrics;
    this.#client = client;
    this.claims = new Claims(this, this.id);
    this.#subscriber = this.#client.duplicate();
    for (const client of [this.#client, this.#subscriber]) {
      client.on('error', () => this.#down());
      client.on('end', () => this.#down());
      client.on('ready', () => this.#ready());
    }
  }

  /** Redis is reachable on both connections. */
  get up(): boolean {
    return this.#up;
  }

  /** A command, counted as a round trip, and as an error when it fails. */
  async call<T>(command: (client: Redis) => Promise<T>): Promise<T> {
    this.#metrics.redisRoundTrips.inc();
    try {
      return await command(this.#client);
    } catch (error) {
      this.#metrics.redisErrors.inc();
      throw error;
    }
  }

  /** Connects both connections and subscribes; rejects when Redis cannot be reached at start. */
  async start(handlers: BusHandlers): Promise<void> {
    this.#handlers = handlers;
    try {
      await Promise.all([this.#client.connect(), this.#subscriber.connect()]);
      await this.#subscriber.subscribe(REDIS_KEYS.inbox(this.id), (message) => this.#onInbox(message), true);
      await this.#subscriber.subscribe(REDIS_KEYS.broadcast, () => handlers.keysChanged());
    } catch (error) {
      await this.close();
      throw new Error(`could not reach Redis at ${redact(this.#url)}: ${(error as Error).message}`);
    }
    this.#ready();
    await this.claims.alive(); // before any channel is claimed: a holder is one whose instance is alive
    this.#watchdog = setInterval(() => this.#checkHolders(), 1000);
    this.#watchdog.unref();
  }

  #ready(): void {
    if (this.#up || !this.#client.isReady || !this.#subscriber.isReady) return;
    this.#up = true;
    if (this.#everUp) {
      this.#logger.info(`Redis at ${redact(this.#url)} is back; relaying again.`);
      this.#handlers?.recovered();
    }
    this.#everUp = true;
  }

  #down(): void {
    if (!this.#up) return;
    this.#up = false;
    this.#logger.warn(
      `Lost Redis at ${redact(this.#url)}; requests get 503 with Retry-After until it is back (reconnecting).`,
    );
    // No answer can come back through Redis now: nobody waits for one.
    for (const waiting of [...this.#waiting.values()]) waiting.resolve({ kind: 'unreachable' });
  }

  /**
   * Claims a channel for a listener connected here (the newest listener wins): the instance that held it
   * before, if another, is told to let its listener go.
   */
  async claim(channel: string, keyId: string | null): Promise<void> {
    const previous = await this.claims.claim(channel, keyId);
    if (previous) {
      const message = packBinary({ type: 'replaced', channel }, []);
      await this.call((c) => c.publish(REDIS_KEYS.inbox(previous), message));
    }
  }

  /**
   * Renews this instance's liveness (one command, whatever its channels); with `held`, keeps their claims
   * too (claiming again what Redis forgot) and returns the channels another instance took meanwhile.
   */
  async renew(held?: { channel: string; keyId: string | null }[]): Promise<string[]> {
    await this.claims.alive();
    return held ? this.claims.hold(held) : [];
  }

  /** Lets channels go when their listeners left this instance. */
  async release(held: { channel: string; keyId: string | null }[]): Promise<void> {
    await this.claims.release(held);
  }

  /**
   * The instance holding a channel, and whether one has lately. A holder found is remembered for a
   * second, so a busy channel costs one PUBLISH per request here, not a lookup too; `fresh` asks Redis
   * again (after the remembered holder said it has the channel no more).
   */
  async holderOf(channel: string, fresh = false): Promise<{ holder: string | null; seen: boolean }> {
    const known = this.#holders.get(channel);
    if (!fresh && known && known.until > Date.now()) return { holder: known.holder, seen: true };
    const found = await this.claims.holder(channel);
    if (found.holder !== null) {
      if (this.#holders.size >= 10_000) this.#holders.clear();
      this.#holders.set(channel, { holder: found.holder, until: Date.now() + 1000 });
    } else this.#holders.delete(channel);
    return found;
  }

  /** Sends a request to the instance holding its channel and waits for the outcome. */
  exchange(
    holder: string,
    request: Omit<RemoteRequest, 'body'>,
    body: Buffer[],
    timeoutMs: number,
  ): Promise<RemoteOutcome> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
      const finish = (outcome: RemoteOutcome) => {
        clearTimeout(timer);
        if (this.#waiting.delete(id)) resolve(outcome);
      };
      this.#waiting.set(id, { holder, resolve: finish });
      const { channel, method, path, headers } = request;
      const message = packBinary({ type: 'request', id, from: this.id, channel, method, path, headers }, body);
      this.call((c) => c.publish(REDIS_KEYS.inbox(holder), message)).then(
        // Nobody subscribed to its inbox: the holder is gone.
        (receivers) => receivers === 0 && finish({ kind: 'gone' }),
        () => finish({ kind: 'unreachable' }),
      );
    });
  }

  /** Tells every instance that the access keys changed. */
  async announceKeys(): Promise<void> {
    await this.call((c) => c.publish(REDIS_KEYS.broadcast, 'keys'));
  }

  /** Answers waiting on an instance whose liveness key ran out: it died before answering. */
  async #checkHolders(): Promise<void> {
    if (!this.#up) return;
    const holders = new Set([...this.#waiting.values()].map((waiting) => waiting.holder));
    for (const holder of holders) {
      const alive = await this.call((c) => c.exists(REDIS_KEYS.instance(holder))).catch(() => 1);
      if (alive) continue;
      for (const waiting of [...this.#waiting.values()])
        if (waiting.holder === holder) waiting.resolve({ kind: 'gone' });
    }
  }

  #onInbox(message: Buffer): void {
    const unpacked = unpackBinary(message);
    if (!unpacked) return;
    const { fields, body } = unpacked;
    if (fields.type === 'replaced' && typeof fields.channel === 'string') this.#handlers?.replaced(fields.channel);
    else if (fields.type === 'answer' && typeof fields.id === 'number') this.#answered(fields, body);
    else if (fields.type === 'request') this.#requested(fields, body);
  }

  #answered(fields: Record<string, unknown>, body: Buffer): void {
    const waiting = this.#waiting.get(fields.id as number);
    if (!waiting) return;
    const kind = fields.kind as RemoteOutcome['kind'];
    waiting.resolve(
      kind === 'answered'
        ? { kind, status: fields.status as number, headers: fields.headers as HeaderMap, body }
        : ({ kind } as RemoteOutcome),
    );
  }

  #requested(fields: Record<string, unknown>, body: Buffer): void {
    const { id, from, channel, method, path, headers } = fields;
    if (typeof from !== 'string' || typeof channel !== 'string' || typeof method !== 'string') return;
    if (typeof path !== 'string' || typeof headers !== 'object' || headers === null || !this.#handlers) return;
    const request = { channel, method, path, headers: headers as HeaderMap, body };
    this.#handlers
      .request(request)
      .catch((): RemoteOutcome => ({ kind: 'gone' }))
      .then((outcome) => {
        const { body: answerBody = Buffer.alloc(0), ...rest } = outcome as RemoteOutcome & { body?: Buffer };
        const answer = packBinary(Object.assign(rest, { type: 'answer', id }), answerBody);
        return this.call((c) => c.publish(REDIS_KEYS.inbox(from), answer));
      })
      .catch(() => {});
  }

  /**
   * Lets every channel of this instance go as it stops, in at most STOP_MS: a Redis that stopped answering
   * (gone a moment ago, or cut off) leaves commands unanswered, and the relay stops all the same; the claims
   * it could not let go run out by themselves.
   */
  async stopping(held: { channel: string; keyId: string | null }[]): Promise<void> {
    if (this.#up) await atMost(this.release(held), STOP_MS);
  }

  /** Closes both connections, each in at most STOP_MS (see stopping). */
  async close(): Promise<void> {
    clearInterval(this.#watchdog);
    this.#handlers = null;
    for (const client of [this.#subscriber, this.#client]) {
      client.removeAllListeners('end');
      client.removeAllListeners('error');
      client.on('error', () => {});
      // close() waits for the answers to commands sent; a client still trying to connect is stopped at once.
      if (client.isReady) await atMost(client.close(), STOP_MS);
      try {
        if (client.isOpen) client.destroy();
      } catch {
        // closed meanwhile: nothing to stop
      }
    }
  }
}

/** Waits for `work` to settle, at most `ms`. */
function atMost(work: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    work.then(done, done);
  });
}

/** A Redis URL as it may be logged: without its password. */
export function redact(url: string): string {
  if (!URL.canParse(url)) return 'the given URL';
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.href;
}
