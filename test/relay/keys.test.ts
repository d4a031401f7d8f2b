import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { connectRelay, type RelayClient, type RelayServer, startRelayServer } from '../../src/relay/index.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/sandbox.js';

/** Access keys on a relay without Redis (a keys file), the per-key limits, and listen's side of a refusal. */
let dir: Awaited<ReturnType<typeof tempDir>>;
let keysFile: string;
let relay: RelayServer;
const clients: RelayClient[] = [];

async function addKey(name: string, file = keysFile): Promise<string> {
  const added = await runCli(['relay', 'keys', 'add', name, '--keys', file, '--json'], { cwd: dir.path });
  expect(added.stderr).toBe('');
  return (JSON.parse(added.stdout) as { key: string }).key;
}

function listener(url: string, relayKey?: string, onRefused?: (message: string) => void) {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const client = connectRelay({
    relayUrl: url,
    token: randomBytes(32).toString('base64url'),
    relayKey,
    logger: silentLogger,
    minBackoffMs: 50,
    maxBackoffMs: 200,
    // Answers once the test releases it, so that requests stay in flight.
    handle: async () => {
      await held;
      return { status: 200, headers: {}, body: Buffer.from('ok') };
    },
    onRefused,
  });
  clients.push(client);
  return { client, release };
}

beforeAll(async () => {
  dir = await tempDir();
  keysFile = join(dir.path, 'relay-keys.json');
  await addKey('alice');
  relay = await startRelayServer({
    port: 0,
    host: '127.0.0.1',
    keysFile,
    maxChannelsPerKey: 2,
    maxInFlightPerKey: 3,
    // The keys file read again, and each key's use written, every 200 ms: the tests wait for that.
    keysRefreshMs: 200,
  });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
afterAll(async () => {
  await relay.close();
  await dir.remove();
});

describe('relay access keys in a file', () => {
  it('keeps only hashes, in a 0600 file, and shows a key once', async () => {
    const key = await addKey('bob');
    expect(key).toMatch(/^chk_[A-Za-z0-9_-]{43}$/);
    const text = await readFile(keysFile, 'utf8');
    expect(text).not.toContain(key);
    expect(text).toContain('"name": "bob"');
    expect((await stat(keysFile)).mode & 0o777).toBe(0o600);
    const again = await runCli(['relay', 'keys', 'add', 'bob', '--keys', keysFile], { cwd: dir.path });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('A key named bob exists already');
    const bad = await runCli(['relay', 'keys', 'add', 'no spaces', '--keys', keysFile], { cwd: dir.path });
    expect(bad.stderr).toContain('is not a key name');
    const nowhere = await runCli(['relay', 'keys', 'list'], { cwd: dir.path });
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('--redis redis://host:6379');
  });

  it('refuses a listener without a key, or with a key it does not know, saying how to get one', async () => {
    for (const key of [undefined, 'chk_unknown']) {
      const error = await listener(relay.url, key).client.ready.catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect(String(error)).toContain('clockhook relay keys add');
      expect(String(error)).toContain('--relay-key');
    }
  });

  it('holds each key to its own channel and in-flight limits, so one member cannot starve another', async () => {
    const alice = await addKey('alice-limits');
    const carol = await addKey('carol');
    await new Promise((resolve) => setTimeout(resolve, 500)); // the relay reads the file again every 200 ms
    const first = listener(relay.url, alice);
    const second = listener(relay.url, alice);
    const urls = await Promise.all([first.client.ready, second.client.ready]);
    const third = await listener(relay.url, alice).client.ready.catch((e: Error) => e);
    expect(String(third)).toContain('holds its 2 channels already');
    // Three of alice's requests are in flight: her fourth gets 429, carol's still goes through.
    const pending = Array.from({ length: 3 }, (_, i) => fetch(urls[i % 2], { method: 'POST', body: 'x' }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const fourth = await fetch(urls[0], { method: 'POST', body: 'x' });
    expect(fourth.status).toBe(429);
    expect((await fourth.json()).error.message).toContain('access key have 3 requests in flight');
    const other = listener(relay.url, carol);
    other.release();
    expect((await fetch(await other.client.ready, { method: 'POST', body: 'x' })).status).toBe(200);
    first.release();
    second.release();
    expect((await Promise.all(pending)).map((res) => res.status)).toEqual([200, 200, 200]);
    // The relay writes each key's use beside the file; list reads it.
    const listRows = async () => {
      const listed = await runCli(['relay', 'keys', 'list', '--keys', keysFile, '--json'], { cwd: dir.path });
      return (JSON.parse(listed.stdout) as { data: { name: string; channels: number; requestsLastHour: number }[] })
        .data;
    };
    await expect.poll(async () => (await listRows()).find((row) => row.name === 'carol')?.requestsLastHour).toBe(1);
    const rows = await listRows();
    expect(rows.find((row) => row.name === 'alice-limits')).toMatchObject({ channels: 2, requestsLastHour: 3 });
    expect(rows.find((row) => row.name === 'carol')).toMatchObject({ channels: 1, requestsLastHour: 1 });
  });

  it('lets the listeners of a revoked key go within seconds', async () => {
    const dave = await addKey('dave');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const refused: string[] = [];
    const one = listener(relay.url, dave, (message) => refused.push(message));
    await one.client.ready;
    const revoked = await runCli(['relay', 'keys', 'revoke', 'dave', '--keys', keysFile], { cwd: dir.path });
    expect(revoked.code).toBe(0);
    const started = Date.now();
    while (refused.length === 0 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 50));
    expect(refused[0]).toContain('was revoked');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('makes listen exit 1 with the relay’s message when its key is refused, and relay keys work on Redis too', async () => {
    const proc = spawnCli(
      ['listen', '--json', '--port', '0', '--sandbox-port', '0', '--no-inspector', '--relay', relay.url],
      { cwd: dir.path, env: { CLOCKHOOK_RELAY_KEY: 'chk_wrong' } },
    );
    expect(await proc.exited).toBe(1);
    expect(proc.stderr).toContain('the relay refused this listener');
    expect(proc.stderr).toContain('clockhook relay keys add');
    const redis = await startRedis();
    try {
      const added = await runCli(['relay', 'keys', 'add', 'erin', '--json'], {
        cwd: dir.path,
        env: { CLOCKHOOK_RELAY_REDIS: redis.url },
      });
      expect(added.code).toBe(0);
      const listed = await runCli(['relay', 'keys', 'list', '--redis', redis.url], { cwd: dir.path });
      expect(listed.stdout).toMatch(/erin\s+[0-9a-f]{12}\s+\S+ \S+\s+in use\s+0\s+0/);
    } finally {
      await redis.stop();
    }
  });
});
