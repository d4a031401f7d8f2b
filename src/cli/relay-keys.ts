import type { Command } from 'commander';
import type { KeyStore } from '../relay/index.js';
import { UsageError } from '../errors.js';
import { formatTable, printJson, terminalWidth } from './output.js';
import { fromEnv } from './process.js';

/** The relay's keys, loaded when a keys command runs (a CLI start loads every command's module). */
const relayLib = () => import('../relay/index.js');

interface KeysFlags {
  redis?: string;
  keys?: string;
  json?: boolean;
}

/** The keys of the relay the flags name: in its Redis (`--redis` or $CLOCKHOOK_RELAY_REDIS), or in `--keys`. */
async function withStore<T>(flags: KeysFlags, use: (store: KeyStore) => Promise<T>): Promise<T> {
  const redis = flags.redis ?? fromEnv('CLOCKHOOK_RELAY_REDIS');
  if (redis && flags.keys)
    throw new UsageError('--redis and --keys name two places for the keys: give the one your relay uses.');
  if (!redis && !flags.keys)
    throw new UsageError(
      "Say where the relay's keys are: --redis redis://host:6379 (the relay's --redis), or --keys <file> (its --keys).",
    );
  const { FileKeyStore, redisKeyStore } = await relayLib();
  if (!redis) return use(new FileKeyStore(flags.keys as string));
  const { store, close } = await redisKeyStore(redis);
  try {
    return await use(store);
  } finally {
    await close().catch(() => {});
  }
}

async function add(name: string, flags: KeysFlags): Promise<void> {
  const { addKey } = await relayLib();
  const { key, record } = await withStore(flags, (store) => addKey(store, name));
  if (flags.json) return printJson({ name: record.name, id: record.id, key, createdAt: record.createdAt });
  console.log(`Added the key ${record.name} (${record.id}). It is shown this once; give it to ${record.name}:\n`);
  console.log(`  ${key}\n`);
  console.log('They connect with: npx clockhook listen --relay <the relay URL> --relay-key <the key>');
  console.log('(or CLOCKHOOK_RELAY_KEY=<the key> in their environment).');
}

async function list(flags: KeysFlags): Promise<void> {
  const rows = await withStore(flags, async (store) => {
    const keys = await store.list();
    const usage = await store.usage(keys);
    return keys
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map((key) => ({ ...key, hash: undefined, ...(usage.get(key.id) ?? { channels: 0, requestsLastHour: 0 }) }));
  });
  if (flags.json) return printJson({ object: 'list', data: rows.map(({ hash: _hash, ...row }) => row) });
  if (rows.length === 0) return console.log('No keys yet: add one with clockhook relay keys add <name>.');
  const table = rows.map((row) => [
    row.name,
    row.id,
    row.createdAt.slice(0, 16).replace('T', ' '),
    row.revokedAt ? `revoked ${row.revokedAt.slice(0, 16).replace('T', ' ')}` : 'in use',
    row.channels,
    row.requestsLastHour,
  ]);
  console.log(formatTable(['NAME', 'ID', 'ADDED', 'STATE', 'CHANNELS', 'REQUESTS (1 H)'], table, terminalWidth()));
}

async function revoke(name: string, flags: KeysFlags): Promise<void> {
  const { revokeKey } = await relayLib();
  const revoked = await withStore(flags, (store) => revokeKey(store, name));
  if (flags.json) return printJson({ name: revoked.name, id: revoked.id, revokedAt: revoked.revokedAt });
  console.log(`Revoked the key ${revoked.name}: its listeners are let go within seconds, on every instance.`);
}

/** `clockhook relay keys add|list|revoke`: who may open channels on a team's relay. */
export function registerRelayKeys(relay: Command): Command {
  const keys = relay
    .command('keys')
    .description('manage the access keys listeners need to open channels on this relay');
  const where = (command: Command) =>
    command
      .option('--redis <url>', "the relay's Redis (default: $CLOCKHOOK_RELAY_REDIS)")
      .option('--keys <file>', "the relay's keys file, without Redis")
      .option('--json', 'print JSON');
  // `relay` has --redis and --keys too, and commander gives them to it wherever they are typed: read both.
  const flagsOf = (command: Command) => command.optsWithGlobals<KeysFlags>();
  where(keys.command('add <name>').description('add a key for <name> and print it, once')).action(
    (name: string, _flags: KeysFlags, command: Command) => add(name, flagsOf(command)),
  );
  where(
    keys.command('list').description("list the keys, each with its channels now and the last hour's requests"),
  ).action((_flags: KeysFlags, command: Command) => list(flagsOf(command)));
  where(keys.command('revoke <name>').description('revoke the key of <name>; its listeners are let go')).action(
    (name: string, _flags: KeysFlags, command: Command) => revoke(name, flagsOf(command)),
  );
  return keys;
}
