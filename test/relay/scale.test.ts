import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createClient } from '@redis/client';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { type RelayServer, startRelayServer } from '../../src/relay/index.js';
import { BIN, cleanEnv } from '../helpers/cli.js';
import { connectFakeListeners } from '../helpers/fake-listeners.mjs';
import { post } from '../helpers/listen.js';
import { startRedis } from '../helpers/redis.js';

// The relay with many channels: its heartbeat never holds the loop, its Redis work is per instance, and its
// open-file limit is said and kept. Real relays, a real redis-server, listeners over the relay's protocol.
const relays: RelayServer[] = [];
const cleanups: (() => unknown)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  for (const relay of relays) await relay.close();
});

async function relayOn(options: Parameters<typeof startRelayServer>[0] = {}): Promise<RelayServer> {
  const relay = await startRelayServer({ port: 0, host: '127.0.0.1', logger: silentLogger, ...options });
  relays.push(relay);
  return relay;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the relay at scale', () => {
  it('pings 2,000 listeners without holding the loop as one tick for all did, and drops a silent one within two periods', async () => {
    const heartbeatMs = 1_000;
    const relay = await relayOn({ heartbeatMs, maxChannels: 3_000 });
    const fake = await connectFakeListeners(relay.url, 2_000);
    cleanups.push(fake.close);
    expect(relay.connected).toBe(2_000);
    // One listener stops reading: it never answers a ping again.
    const silent = fake.listeners[0].ws as unknown as { _socket: Socket };
    silent._socket.pause();
    const stoppedAt = Date.now();
    const dropped = (async () => {
      await expect.poll(() => relay.connected, { timeout: 4 * heartbeatMs, interval: 20 }).toBe(1_999);
      return Date.now();
    })();
    // The longest the loop was held in each of three heartbeat periods. A stall of the heartbeat's making comes
    // in every period (one tick for all 2,000 held it ~60 ms); a pause of the machine's (the process not run
    // for a while on a loaded core) comes in one: the least of the three is the heartbeat's. The bound is below the
    // stall of one tick for all (~60 ms) and above what a machine busy with the whole suite and another process
    // shows in every period (up to 26-33 ms, seen in a fresh-clone CI with a core kept busy).
    const held: number[] = [];
    for (let period = 0; period < 3; period++) {
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      await sleep(heartbeatMs);
      delay.disable();
      held.push(Math.round(delay.max / 1e5) / 10);
    }
    expect(Math.min(...held), `the longest the loop was held in each period, in ms: ${held.join(', ')}`).toBeLessThan(
      45,
    );
    expect((await dropped) - stoppedAt).toBeLessThan(2 * heartbeatMs + 500);
  }, 60_000);

  it('sends Redis as many commands while idle with 500 channels as with 50, two instances each', async () => {
    const count = async (channels: number) => {
      const redis = await startRedis();
      cleanups.push(redis.stop);
      const pair = [await relayOn({ redis: redis.url }), await relayOn({ redis: redis.url })];
      const fake = await connectFakeListeners(
        pair.map((relay) => relay.url),
        channels,
      );
      cleanups.push(fake.close);
      const client = createClient({ url: redis.url });
      await client.connect();
      cleanups.push(() => client.close());
      const processed = async () => Number(/total_commands_processed:(\d+)/.exec(await client.info('stats'))?.[1]);
      await sleep(1_000); // the claims made
      const before = await processed();
      await sleep(10_000);
      return (await processed()) - before - 1; // not the INFO that read it
    };
    const [few, many] = await Promise.all([count(50), count(500)]);
    expect(many, `${many} commands in 10 s with 500 channels, ${few} with 50`).toBeLessThanOrEqual(few + 6);
    expect(many / 10, 'commands a second').toBeLessThan(50);
  }, 60_000);

  it('stops within seconds while its Redis holds commands unanswered, and when Redis has just gone away', async () => {
    for (const away of ['frozen', 'gone'] as const) {
      const redis = await startRedis();
      cleanups.push(redis.stop);
      const relay = await startRelayServer({ port: 0, host: '127.0.0.1', logger: silentLogger, redis: redis.url });
      const fake = await connectFakeListeners(relay.url, 200);
      cleanups.push(fake.close);
      if (away === 'frozen') redis.freeze(true);
      else await redis.stop();
      const started = Date.now();
      await relay.close();
      expect(Date.now() - started, `ms to stop with Redis ${away}`).toBeLessThan(5_000);
      redis.freeze(false);
    }
  }, 60_000);

  it('says a low open-file limit at start, and answers a sender beyond it 503 with Retry-After', async () => {
    const child = spawn(
      'sh',
      ['-c', `ulimit -n 200 && exec "${process.execPath}" "${BIN}" relay --port 0 --host 127.0.0.1 --json`],
      {
        env: cleanEnv(),
      },
    );
    cleanups.push(() => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    await expect.poll(() => /"event":"ready"/.test(stdout), { timeout: 20_000 }).toBe(true);
    const url = JSON.parse(stdout.split('\n')[0]).url as string;
    expect(stderr).toContain(
      'The open-file limit of this process is 200 (ulimit -n): the relay takes about 152 connections at once',
    );
    expect(stderr).toContain('ulimit -n 65536');
    // 160 connections held open (idle senders): past what the limit leaves for connections.
    const held = await Promise.all(
      Array.from(
        { length: 160 },
        () =>
          new Promise<Socket>((resolve) => {
            const socket = connect(Number(new URL(url).port), '127.0.0.1', () => resolve(socket));
          }),
      ),
    );
    cleanups.push(() => held.forEach((socket) => socket.destroy()));
    // Once the relay has taken them all in (it accepts them in turn), a sender beyond them is answered.
    let answer = await post(`${url}/c/${'a'.repeat(32)}/hooks`, '{}');
    await expect.poll(async () => (answer = await post(`${url}/c/${'a'.repeat(32)}/hooks`, '{}')).status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('10');
    expect(JSON.parse(answer.text).error.code).toBe('relay_at_limit');
    await expect.poll(() => stderr).toContain('the process is at its open-file limit');
    for (const socket of held) socket.destroy();
    await sleep(200);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/clockhook_relay_refusals_total\{cause="descriptors"\} [1-9]/);
    expect(metrics).toMatch(/clockhook_relay_heartbeat_lag_seconds \d/);
  }, 60_000);
});
