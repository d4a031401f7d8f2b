import { createHash, randomBytes } from 'node:crypto';
import { type RelayBus, REDIS_KEYS, redact, redisClient } from './bus.js';
import { COUNT_KEY_CHANNELS } from './claims.js';
import { CliError } from '../errors.js';
import { readJsonFile, writePrivateFile } from '../folder/index.js';

/**
 * Access keys: who may open channels on a team's relay. Only a SHA-256 hash of each key is stored (a key
 * is 256 random bits, so a slow hash would add nothing), in Redis with `--redis`, else in a 0600 file.
 * A revoked key stays, marked, so that revoking the last key never opens the relay to everyone.
 */
export interface RelayKey {
  /** Public id, used in Redis key names and metrics instead of the key. */
  id: string;
  name: string;
  hash: string;
  createdAt: string;
  revokedAt?: string;
}

/** Each key's use: channels held now and requests in the last hour. */
export interface KeyUsage {
  channels: number;
  requestsLastHour: number;
}

export interface KeyStore {
  /** Where the keys are, for messages. */
  readonly where: string;
  list(): Promise<RelayKey[]>;
  put(key: RelayKey): Promise<void>;
  usage(keys: RelayKey[]): Promise<Map<string, KeyUsage>>;
}

export const KEY_PREFIX = 'chk_';
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export class KeyError extends CliError {
  override readonly name = 'KeyError';
}

/** Adds a key named `name`; returns it, the only time it is shown. */
export async function addKey(
  store: KeyStore,
  name: string,
  now = new Date(),
): Promise<{ key: string; record: RelayKey }> {
  if (!NAME_PATTERN.test(name))
    throw new KeyError(`"${name}" is not a key name: use letters, digits, ".", "_", "@" or "-" (up to 64), e.g. alice`);
  const keys = await store.list();
  if (keys.some((key) => key.name === name && !key.revokedAt))
    throw new KeyError(`A key named ${name} exists already; revoke it first, or pick another name.`);
  const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const record: RelayKey = {
    id: randomBytes(6).toString('hex'),
    name,
    hash: hashKey(key),
    createdAt: now.toISOString(),
  };
  await store.put(record);
  return { key, record };
}

/** Revokes the key named `name` (its listeners are let go within seconds). */
export async function revokeKey(store: KeyStore, name: string, now = new Date()): Promise<RelayKey> {
  const keys = await store.list();
  const key = keys.find((candidate) => candidate.name === name && !candidate.revokedAt);
  if (!key) {
    const names = keys.filter((candidate) => !candidate.revokedAt).map((candidate) => candidate.name);
    throw new KeyError(
      `No key named ${name} in ${store.where}. ${names.length ? `Its keys: ${names.join(', ')}.` : 'It has no key in use.'}`,
    );
  }
  const revoked = Object.assign({}, key, { revokedAt: now.toISOString() });
  await store.put(revoked);
  return revoked;
}

interface KeyFile {
  keys: RelayKey[];
}

/** `<keys file>.usage`, written by the running relay: each key's channels now and requests per minute. */
export type UsageFile = Record<string, { channels: number; minutes: Record<string, number> }>;

const isUsageFile = (value: unknown): value is UsageFile => typeof value === 'object' && value !== null;

const isKeyFile = (value: unknown): value is KeyFile =>
  typeof value === 'object' && value !== null && Array.isArray((value as KeyFile).keys);

/** Keys in a JSON file (0600), for a relay without Redis. */
export class FileKeyStore implements KeyStore {
  readonly where: string;
  constructor(readonly path: string) {
    this.where = path;
  }

  async #read(): Promise<KeyFile> {
    const read = await readJsonFile(this.path, isKeyFile, {
      marker: '{\n  "keys"',
      what: 'a clockhook relay keys file',
    });
    if (read.status === 'corrupt')
      throw new KeyError(`${this.path} is not a keys file (${read.reason}); it was moved to ${read.movedTo}.`);
    return read.status === 'ok' ? read.data : { keys: [] };
  }

  async list(): Promise<RelayKey[]> {
    return (await this.#read()).keys;
  }

  async put(key: RelayKey): Promise<void> {
    const file = await this.#read();
    const keys = [...file.keys.filter((other) => other.id !== key.id), key];
    await writePrivateFile(this.path, `${JSON.stringify({ keys }, null, 2)}\n`);
  }

  /** The running relay's record of use, in a file of its own so that it never races `keys add`. */
  async writeUsage(usage: UsageFile): Promise<void> {
    await writePrivateFile(`${this.path}.usage`, `${JSON.stringify(usage)}\n`);
  }

  async usage(keys: RelayKey[]): Promise<Map<string, KeyUsage>> {
    const read = await readJsonFile(`${this.path}.usage`, isUsageFile);
    const usage = read.status === 'ok' ? read.data : {};
    const hourAgo = Math.floor(Date.now() / 60_000) - 60;
    return new Map(
      keys.map((key) => {
        const entry = usage[key.id];
        const requests = Object.entries(entry?.minutes ?? {})
          .filter(([minute]) => Number(minute) > hourAgo)
          .reduce((sum, [, count]) => sum + count, 0);
        return [key.id, { channels: entry?.channels ?? 0, requestsLastHour: requests }];
      }),
    );
  }
}

/** What the keys in Redis need of a connection: the relay's bus, or the `relay keys` command's own client. */
type KeyBus = Pick<RelayBus, 'call' | 'announceKeys'>;

/** Keys in Redis, shared by every instance; a change is announced so each instance applies it at once. */
export class RedisKeyStore implements KeyStore {
  readonly where = 'Redis';
  constructor(readonly bus: KeyBus) {}

  async list(): Promise<RelayKey[]> {
    const hash = await this.bus.call((c) => c.hGetAll(REDIS_KEYS.keys));
    return Object.values(hash).map((json) => JSON.parse(String(json)) as RelayKey);
  }

  async put(key: RelayKey): Promise<void> {
    await this.bus.call((c) => c.hSet(REDIS_KEYS.keys, key.id, JSON.stringify(key)));
    await this.bus.announceKeys();
  }

  async usage(keys: RelayKey[]): Promise<Map<string, KeyUsage>> {
    const minute = Math.floor(Date.now() / 60_000);
    const entries = await Promise.all(
      keys.map(async (key): Promise<[string, KeyUsage]> => {
        const channels = Number(
          await this.bus.call((c) =>
            c.eval(COUNT_KEY_CHANNELS, {
              keys: [REDIS_KEYS.keyHolders(key.id)],
              arguments: [REDIS_KEYS.instance(''), ''],
            }),
          ),
        );
        const names = Array.from({ length: 60 }, (_, i) => REDIS_KEYS.keyRequests(key.id, minute - i));
        const counts = await this.bus.call((c) => c.mGet(names));
        const requests = counts.reduce((sum: number, count) => sum + Number(count ?? 0), 0);
        return [key.id, { channels, requestsLastHour: requests }];
      }),
    );
    return new Map(entries);
  }
}

/** A connection for `clockhook relay keys` on Redis; `close` when done. */
export async function redisKeyStore(url: string): Promise<{ store: RedisKeyStore; close: () => Promise<void> }> {
  const client = await redisClient(url, false);
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    throw new KeyError(
      `could not reach Redis at ${redact(url)}: ${(error as Error).message}. Is --redis the relay's Redis URL?`,
    );
  }
  const bus: KeyBus = {
    call: (command) => command(client),
    announceKeys: async () => {
      await client.publish(REDIS_KEYS.broadcast, 'keys');
    },
  };
  return { store: new RedisKeyStore(bus), close: () => client.close() };
}
