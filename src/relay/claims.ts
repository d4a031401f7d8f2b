// Which instance holds each channel's listener, on Redis, in work per instance rather than per channel: an
// instance renews one key of its own (alive) every 2 s; a channel's holder key names an instance and lasts a
// day, so it also says that a listener has held the channel lately (senders get 503, not 404, while it is
// away). A holder whose instance key ran out is dead: its channels are nobody's within CLAIM_MS. The scripts
// are loaded once and run by their SHA, each over up to a thousand channels.
import type { Redis } from './redis.js';

/** What the claims need of a bus: a command on its connection. */
interface Caller {
  call<T>(command: (client: Redis) => Promise<T>): Promise<T>;
}

const PREFIX = 'clockhook:relay:';
export const CLAIM_KEYS = {
  /** Which instance holds a channel's listener ('-': nobody now, but one did within SEEN_MS). */
  holder: (channel: string) => `${PREFIX}holder:${channel}`,
  /** An instance is alive: renewed every third of CLAIM_MS. */
  instance: (id: string) => `${PREFIX}instance:${id}`,
  /** Set: `<instance>:<channel>` for each channel an access key's listeners hold, on every instance. */
  keyHolders: (keyId: string) => `${PREFIX}key-holders:${keyId}`,
};

/** How long an instance's liveness lasts without renewal; renewed every third of it. */
export const CLAIM_MS = 6000;
/** How long a holder key says a listener held the channel lately. */
const SEEN_MS = 24 * 60 * 60 * 1000;
/** Channels per script call. */
const CHUNK = 1000;
const NOBODY = '-';

/**
 * Holds the channels (KEYS: their holder keys; ARGV: id, SEEN_MS, key-holders prefix, then channel and key id
 * for each) for instance ARGV[1] unless another instance holds one now; returns the positions of those lost.
 */
const HOLD = `
local lost = {}
for i, key in ipairs(KEYS) do
  local current = redis.call('GET', key)
  if current and current ~= '${NOBODY}' and current ~= ARGV[1] then
    table.insert(lost, i)
  else
    redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
    local keyId = ARGV[3 + 2 * i]
    if keyId ~= '' then redis.call('SADD', ARGV[3] .. keyId, ARGV[1] .. ':' .. ARGV[2 + 2 * i]) end
  end
end
return lost`;

/** Lets the channels go (same arguments as HOLD) where instance ARGV[1] still holds them. */
const RELEASE = `
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('SET', key, '${NOBODY}', 'PX', ARGV[2]) end
  local keyId = ARGV[3 + 2 * i]
  if keyId ~= '' then redis.call('SREM', ARGV[3] .. keyId, ARGV[1] .. ':' .. ARGV[2 + 2 * i]) end
end
return 1`;

/** The holder of KEYS[1] if its instance (key prefix ARGV[1]) is alive, and whether one held it lately. */
const HOLDER = `
local holder = redis.call('GET', KEYS[1])
if not holder then return {false, 0} end
if holder ~= '${NOBODY}' and redis.call('EXISTS', ARGV[1] .. holder) == 1 then return {holder, 1} end
return {false, 1}`;

/**
 * The channels an access key's listeners hold on live instances (KEYS[1]: its set; ARGV[1]: the instance key
 * prefix), besides ARGV[2]; members of dead instances are taken out.
 */
export const COUNT_KEY_CHANNELS = `
local alive = {}
local count = 0
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local instance, channel = string.match(member, '^([^:]+):(.+)$')
  if instance and channel ~= ARGV[2] then
    if alive[instance] == nil then alive[instance] = redis.call('EXISTS', ARGV[1] .. instance) == 1 end
    if alive[instance] then count = count + 1 else redis.call('SREM', KEYS[1], member) end
  end
end
return count`;

type Held = { channel: string; keyId: string | null };

const chunks = <T>(items: T[]): T[][] =>
  Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, i) => items.slice(i * CHUNK, (i + 1) * CHUNK));

/** The claims of one instance (`id`) on its bus's Redis connection. */
export class Claims {
  /** Scripts loaded on this Redis, by text. */
  readonly #shas = new Map<string, string>();

  constructor(
    private readonly bus: Caller,
    private readonly id: string,
  ) {}

  /** Runs a script by its SHA, loading it first (again after a Redis restart forgot it: NOSCRIPT). */
  async #run(script: string, keys: string[], args: string[], again = true): Promise<unknown> {
    let sha = this.#shas.get(script);
    if (!sha) {
      sha = String(await this.bus.call((c) => c.scriptLoad(script)));
      this.#shas.set(script, sha);
    }
    const loaded = sha;
    try {
      return await this.bus.call((c) => c.evalSha(loaded, { keys, arguments: args }));
    } catch (error) {
      if (!again || !/NOSCRIPT/.test((error as Error).message)) throw error;
      this.#shas.delete(script);
      return this.#run(script, keys, args, false);
    }
  }

  #arguments(held: Held[]): string[] {
    return [this.id, String(SEEN_MS), CLAIM_KEYS.keyHolders(''), ...held.flatMap((h) => [h.channel, h.keyId ?? ''])];
  }

  /** This instance is alive: one command, whatever the number of its channels. */
  async alive(): Promise<void> {
    await this.bus.call((c) =>
      c.set(CLAIM_KEYS.instance(this.id), '1', { expiration: { type: 'PX', value: CLAIM_MS } }),
    );
  }

  /** Takes a channel (the newest listener wins); the instance that held it before, if another and alive. */
  async claim(channel: string, keyId: string | null): Promise<string | null> {
    const previous = await this.bus.call((c) =>
      c.set(CLAIM_KEYS.holder(channel), this.id, { expiration: { type: 'PX', value: SEEN_MS }, GET: true }),
    );
    await this.hold([{ channel, keyId }]);
    return previous && previous !== this.id && previous !== NOBODY ? String(previous) : null;
  }

  /** Keeps the channels of this instance's listeners, claiming them again if Redis forgot; returns those lost. */
  async hold(held: Held[]): Promise<string[]> {
    const lost: string[] = [];
    for (const chunk of chunks(held)) {
      const keys = chunk.map(({ channel }) => CLAIM_KEYS.holder(channel));
      const positions = (await this.#run(HOLD, keys, this.#arguments(chunk))) as number[];
      lost.push(...positions.map((position) => chunk[position - 1].channel));
    }
    return lost;
  }

  /** Lets channels go whose listeners left this instance. */
  async release(held: Held[]): Promise<void> {
    for (const chunk of chunks(held))
      await this.#run(
        RELEASE,
        chunk.map(({ channel }) => CLAIM_KEYS.holder(channel)),
        this.#arguments(chunk),
      );
  }

  /** The live instance holding a channel, and whether one has lately. */
  async holder(channel: string): Promise<{ holder: string | null; seen: boolean }> {
    const [holder, seen] = (await this.#run(HOLDER, [CLAIM_KEYS.holder(channel)], [CLAIM_KEYS.instance('')])) as [
      string | null,
      number,
    ];
    return { holder: holder ? String(holder) : null, seen: seen === 1 };
  }

  /** The channels an access key holds on live instances now, besides `except`. */
  async keyChannels(keyId: string, except = ''): Promise<number> {
    const keys = [CLAIM_KEYS.keyHolders(keyId)];
    return Number(await this.#run(COUNT_KEY_CHANNELS, keys, [CLAIM_KEYS.instance(''), except]));
  }
}
