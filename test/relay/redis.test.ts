import { randomBytes } from 'node:crypto';
import { createClient } from '@redis/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { channelFor, connectRelay, type RelayClient } from '../../src/relay/index.js';
import { runCli, spawnCli, type SpawnedCli } from '../helpers/cli.js';
import { portForRestarts } from '../helpers/ports.js';
import { startBalancer, startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/sandbox.js';

/**
 * Two relay instances (real processes) on one real Redis, behind a round-robin TCP balancer, with
 * listeners connected in this process. The set-up is shared by the file; the tests run in order, and
 * the ones that kill an instance or Redis bring it back before they end.
 */
let redis: Awaited<ReturnType<typeof startRedis>>;
let balancer: Awaited<ReturnType<typeof startBalancer>>;
let dir: Awaited<ReturnType<typeof tempDir>>;
const ports = { a: 0, b: 0 };
const relays: { a?: SpawnedCli; b?: SpawnedCli } = {};
/** Every token, key and body marker used here: none may show in a Redis key name or a log. */
const secrets: string[] = [];
const clients: RelayClient[] = [];
/** Everything each instance printed, kept across its restarts. */
const printed = { a: '', b: '' };

const direct = (name: 'a' | 'b') => `http://127.0.0.1:${ports[name]}`;

async function startInstance(name: 'a' | 'b'): Promise<void> {
  const args = ['relay', '--redis', redis.url, '--json', '--host', '127.0.0.1', '--port', String(ports[name])];
  const proc = spawnCli([...args, '--public-url', balancer.url], { cwd: dir.path });
  proc.child.stdout?.on('data', (chunk: Buffer) => (printed[name] += chunk.toString()));
  proc.child.stderr?.on('data', (chunk: Buffer) => (printed[name] += chunk.toString()));
  relays[name] = proc;
  await proc.waitForLine((line) => line.event === 'ready', 30_000);
}

function newToken(): string {
  const token = randomBytes(32).toString('base64url');
  secrets.push(token);
  return token;
}

interface Listener {
  client: RelayClient;
  publicUrl: string;
  events: string[];
}

/** A listener in this process that answers 201 with its name, the path, and the body it got. */
async function listener(relayUrl: string, token: string, name = 'one', relayKey?: string): Promise<Listener> {
  const events: string[] = [];
  const client = connectRelay({
    relayUrl,
    token,
    relayKey,
    logger: silentLogger,
    minBackoffMs: 100,
    maxBackoffMs: 1000,
    handle: async (request) => ({
      status: 201,
      headers: { 'content-type': 'application/octet-stream', 'x-listener': name, 'x-path': request.path },
      body: Buffer.from(request.body),
    }),
    onConnected: (url) => events.push(`connected ${url}`),
    onReplaced: (message) => events.push(`replaced ${message}`),
    onRefused: (message) => events.push(`refused ${message}`),
  });
  clients.push(client);
  return { client, publicUrl: await client.ready, events };
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

beforeAll(async () => {
  dir = await tempDir();
  redis = await startRedis();
  ports.a = await portForRestarts();
  ports.b = await portForRestarts();
  balancer = await startBalancer([ports.a, ports.b]);
  await Promise.all([startInstance('a'), startInstance('b')]);
}, 60_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

afterAll(async () => {
  await Promise.all([relays.a?.stop('SIGKILL'), relays.b?.stop('SIGKILL')]);
  await balancer?.close();
  await redis?.stop();
  await dir?.remove();
});

describe('relay instances sharing a Redis', () => {
  it('relays a request that enters instance B to the listener on instance A, and its answer back, byte for byte', async () => {
    const one = await listener(direct('a'), newToken());
    const channel = new URL(one.publicUrl).pathname;
    expect(one.publicUrl.startsWith(`${balancer.url}/c/`)).toBe(true);
    const body = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(100_000)]);
    const res = await fetch(`${direct('b')}${channel}/hooks/time?tenant=7`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': 't=1,v1=abc' },
      body,
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-listener')).toBe('one');
    expect(res.headers.get('x-path')).toBe('/hooks/time?tenant=7');
    expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
    // B answered the sender; the request line is B's.
    await relays.b?.waitForLine(
      (line) => line.event === 'request' && line.status === 201 && line.path === '/hooks/time',
    );
  });

  it('spreads 200 concurrent requests over both instances, each answered with its own bytes', async () => {
    const one = await listener(balancer.url, newToken());
    const before = new Map(balancer.picked);
    const marker = `body-marker-${randomBytes(8).toString('hex')}`;
    secrets.push(marker);
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const res = await fetch(`${one.publicUrl}/n/${i}`, { method: 'POST', body: `${marker}-${i}` });
        return { status: res.status, text: await res.text(), i };
      }),
    );
    for (const answer of answers) expect(answer).toEqual({ status: 201, text: `${marker}-${answer.i}`, i: answer.i });
    for (const port of [ports.a, ports.b])
      expect(balancer.picked.get(port) ?? 0).toBeGreaterThan(before.get(port) ?? 0);
  });

  it('lets a listener that connects to the other instance take the channel over; the first is told', async () => {
    const token = newToken();
    const first = await listener(direct('a'), token, 'first');
    const second = await listener(direct('b'), token, 'second');
    expect(second.publicUrl).toBe(first.publicUrl);
    await until(() => first.events.some((event) => event.startsWith('replaced Another clockhook listen')));
    const path = new URL(first.publicUrl).pathname;
    for (const entry of ['a', 'b'] as const) {
      const res = await fetch(`${direct(entry)}${path}`, { method: 'POST', body: 'x' });
      expect(res.status).toBe(201);
      expect(res.headers.get('x-listener')).toBe('second');
    }
  });

  it('answers 404 for a channel no listener has held, and 503 with Retry-After once its listener left', async () => {
    const unknown = await fetch(`${direct('b')}/c/${channelFor(newToken())}`, { method: 'POST', body: 'x' });
    expect(unknown.status).toBe(404);
    const one = await listener(direct('a'), newToken());
    await one.client.close();
    const path = new URL(one.publicUrl).pathname;
    await until(async () => (await fetch(`${direct('b')}${path}`, { method: 'POST', body: 'x' })).status === 503);
    const res = await fetch(`${direct('b')}${path}`, { method: 'POST', body: 'x' });
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect((await res.json()).error.code).toBe('listener_unavailable');
  });

  it('answers 503 with Retry-After while Redis is away, and recovers by itself when it is back', async () => {
    const one = await listener(direct('a'), newToken());
    const path = new URL(one.publicUrl).pathname;
    await redis.stop();
    try {
      for (const entry of ['a', 'b'] as const) {
        await until(async () => (await fetch(`${direct(entry)}${path}`, { method: 'POST', body: 'x' })).status === 503);
        const res = await fetch(`${direct(entry)}${path}`, { method: 'POST', body: 'x' });
        expect(res.headers.get('retry-after')).toBeTruthy();
        const health = await fetch(`${direct(entry)}/healthz`);
        expect(health.status).toBe(503);
        expect(await health.json()).toMatchObject({ ok: false, redis: 'down' });
      }
      expect(printed.a).toContain('Lost Redis at redis://127.0.0.1');
    } finally {
      await redis.start();
    }
    await until(
      async () => (await fetch(`${direct('b')}${path}`, { method: 'POST', body: 'x' })).status === 201,
      15_000,
    );
    expect(printed.a).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+\/? is back/);
    expect(await (await fetch(`${direct('b')}/healthz`)).json()).toMatchObject({ ok: true, redis: 'up' });
  });

  it('when instance A dies during traffic: every request is answered 2xx or 503, none hangs, and the listener is back through B on the same URL within 10 s', async () => {
    // The listener comes in through the balancer, onto A.
    balancer.upstreams.splice(0, 2, ports.a);
    const one = await listener(balancer.url, newToken());
    balancer.upstreams.splice(0, 1, ports.a, ports.b);
    const outcomes: { status: number | string; started: number; ms: number }[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const started = Date.now();
        // Senders go to B: A's own connections die with it (a TCP balancer cannot answer for them).
        const status = await fetch(`${direct('b')}${new URL(one.publicUrl).pathname}`, {
          method: 'POST',
          body: 'x',
          signal: AbortSignal.timeout(20_000),
        }).then(
          (res) => res.status,
          (error: Error) => error.name,
        );
        outcomes.push({ status, started, ms: Date.now() - started });
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    try {
      await until(() => outcomes.length >= 50);
      const killedAt = Date.now();
      await relays.a?.stop('SIGKILL');
      const back = await until(() => one.events.filter((event) => event.startsWith('connected')).length >= 2, 10_000);
      const backAt = Date.now();
      await until(() => outcomes.filter((outcome) => outcome.started > backAt).length >= 20);
      stop = true;
      await Promise.all(workers);
      expect(back).toBeLessThan(10_000);
      expect(one.events.at(-1)).toBe(`connected ${one.publicUrl}`);
      const during = outcomes.filter((outcome) => outcome.started + outcome.ms > killedAt);
      expect(during.length).toBeGreaterThan(0);
      for (const outcome of during) expect([201, 503]).toContain(outcome.status);
      // Those waiting on A when it died are answered once its liveness runs out (6 s), not after 30 s:
      // 503, or 201 when the listener is back on B by then (B asks Redis again for the holder).
      expect(Math.max(...during.map((outcome) => outcome.ms))).toBeLessThan(9000);
      const since = outcomes.filter((outcome) => outcome.started > backAt);
      expect(since.every((outcome) => outcome.status === 201)).toBe(true);
    } finally {
      stop = true;
      await Promise.all(workers);
      await startInstance('a');
    }
  }, 60_000);

  it('admits only listeners with a key once keys are added, on both instances, and lets them go when it is revoked', async () => {
    const added = await runCli(['relay', 'keys', 'add', 'alice', '--redis', redis.url, '--json'], { cwd: dir.path });
    expect(added.code).toBe(0);
    const { key } = JSON.parse(added.stdout) as { key: string };
    secrets.push(key);
    // Every instance hears of the key at once, and requires keys from then on.
    await until(async () => {
      const refused = await listener(direct('b'), newToken()).then(
        () => null,
        (error: Error) => error,
      );
      return refused !== null;
    });
    const refused = await listener(direct('a'), newToken()).catch((error: Error) => error);
    expect(String(refused)).toContain('admits listeners with an access key only');
    expect(String(refused)).toContain('clockhook relay keys add');
    const onA = await listener(direct('a'), newToken(), 'on-a', key);
    const onB = await listener(direct('b'), newToken(), 'on-b', key);
    for (const one of [onA, onB]) {
      const res = await fetch(`${direct('a')}${new URL(one.publicUrl).pathname}`, { method: 'POST', body: 'x' });
      expect(res.status).toBe(201);
    }
    const list = async () => {
      const listed = await runCli(['relay', 'keys', 'list', '--redis', redis.url, '--json'], { cwd: dir.path });
      return (JSON.parse(listed.stdout) as { data: { name: string; channels: number; requestsLastHour: number }[] })
        .data;
    };
    await until(async () => {
      const [alice] = await list();
      return alice.channels === 2 && alice.requestsLastHour === 2;
    }, 30_000);
    const revoked = await runCli(['relay', 'keys', 'revoke', 'alice', '--redis', redis.url], { cwd: dir.path });
    expect(revoked.code).toBe(0);
    const took = await until(() =>
      [onA, onB].every((one) =>
        one.events.some((event) => event.startsWith('refused The access key of this listener was revoked')),
      ),
    );
    expect(took).toBeLessThan(5000);
    const again = await listener(direct('b'), newToken(), 'again', key).catch((error: Error) => error);
    expect(String(again)).toContain('(alice) was revoked');
  }, 60_000);

  it('serves /metrics in the Prometheus text format, and /healthz with Redis', async () => {
    const text = await (await fetch(`${direct('b')}/metrics`)).text();
    expect(text).toMatch(/clockhook_relay_requests_total\{outcome="relayed"\} [1-9]/);
    expect(text).toMatch(/clockhook_relay_requests_total\{outcome="404"\} [1-9]/);
    expect(text).toMatch(/clockhook_relay_requests_total\{outcome="503"\} [1-9]/);
    expect(text).toContain('clockhook_relay_answer_seconds_bucket{le="0.05"}');
    expect(text).toMatch(/clockhook_relay_redis_round_trips_total [1-9]/);
    expect(text).toMatch(/clockhook_relay_redis_errors_total \d/);
    expect(text).toContain('clockhook_relay_channels ');
    expect(text).toContain('clockhook_relay_requests_in_flight ');
    expect(await (await fetch(`${direct('a')}/healthz`)).json()).toMatchObject({ ok: true, redis: 'up' });
  });

  it('writes no body, token or key to a Redis key name or to a log', async () => {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const names = (await client.keys('*')).map(String);
      expect(names.length).toBeGreaterThan(0);
      expect(names.every((name) => name.startsWith('clockhook:relay:'))).toBe(true);
      const values = await Promise.all(
        names
          .filter((name) => !name.includes(':keys') && !name.includes('key-channels'))
          .map((name) => client.get(name).catch(() => '')),
      );
      for (const secret of secrets) {
        expect(names.join('\n')).not.toContain(secret);
        expect(values.join('\n')).not.toContain(secret);
        expect(printed.a + printed.b).not.toContain(secret);
      }
    } finally {
      await client.close();
    }
    expect(secrets.length).toBeGreaterThan(10);
  });
});
