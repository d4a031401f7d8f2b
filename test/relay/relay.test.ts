// relay and listen --relay: the public URL, a delivery there and back, and the channel's owner.
import { cp, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { channelFor } from '../../src/relay/index.js';
import { runCli } from '../helpers/cli.js';
import { post, readSettledCaptures, startListenProcess } from '../helpers/listen.js';
import { tempDir } from '../helpers/sandbox.js';
import { portForRestarts } from '../helpers/ports.js';
import { app, dir, envelope, listen, logs, procs, relay, relayOn, signed, useRelay, useRelayRig } from './relay-rig.js';

useRelayRig();

describe('relay and listen --relay', () => {
  it('gets a stable public URL and relays a delivery byte for byte, passing the app answer back', async () => {
    const proc = await listen();
    const { publicUrl, secret } = proc.ready;
    expect(publicUrl).toMatch(new RegExp(`^${relay.url}/c/[\\w-]{32}$`));
    const body = envelope('evt_relay1');
    const res = await post(`${publicUrl}/hooks?x=1`, body, signed(body, secret));
    expect(res.status).toBe(201);
    expect(res.text).toBe(body);
    expect(res.headers.get('x-app')).toBe('echo');
    const [got] = app.received;
    expect(got.url).toBe('/hooks?x=1');
    expect(got.body.toString()).toBe(body);
    const [capture] = await readSettledCaptures(dir.path);
    expect(capture).toMatchObject({ path: '/hooks?x=1', signature: { status: 'valid' }, forward: { statusCode: 201 } });
    expect(logs.at(-1)).toEqual({
      event: 'request',
      channel: publicUrl.split('/').at(-1),
      method: 'POST',
      path: '/hooks',
      status: 201,
      durationMs: expect.any(Number),
    });
  });

  it('prints the ready line first with --json, and the relay line of its first connection after it', async () => {
    const proc = await listen();
    await proc.waitForLine((l) => l.event === 'relay' && l.state === 'connected');
    expect(proc.lines[0]).toMatchObject({ event: 'ready' });
    expect(proc.lines.filter((l) => l.event === 'relay')).toEqual([
      { event: 'relay', state: 'connected', publicUrl: proc.ready.publicUrl },
    ]);
  });

  it('registers the channel URL with --path appended, so relayed deliveries land under it', async () => {
    const proc = await listen(dir.path, '--path', '/webhooks');
    expect(proc.ready.publicUrl).toMatch(/\/c\/[\w-]{32}\/webhooks$/);
    const event = JSON.parse((await runCli(['trigger', 'punch.created', '--json'], { cwd: dir.path })).stdout);
    expect(await proc.waitForLine((l) => l.event === 'delivery')).toMatchObject({
      eventId: event.id,
      signature: 'valid',
      status: 201,
    });
    expect(app.received.at(-1)?.url).toBe('/');
  });

  it('answers 503 with Retry-After while the listener is down, and delivers once it is back on the same URL', async () => {
    // The embedded sandbox on the same port both times, as with the default 4302.
    const sandboxPort = String(await portForRestarts());
    const first = await listen(dir.path, '--sandbox-port', sandboxPort);
    const { publicUrl, secret } = first.ready;
    await first.stop('SIGTERM');
    const body = envelope('evt_down');
    const down = await post(publicUrl, body, signed(body, secret));
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('2');
    const second = await listen(dir.path, '--sandbox-port', sandboxPort);
    expect(second.ready.publicUrl).toBe(publicUrl);
    expect(second.ready.endpointId).toBe(first.ready.endpointId); // kept between runs, secret on file
    expect((await post(publicUrl, body, signed(body, secret))).status).toBe(201);
  });

  it('keeps the endpoint and its secret when the sandbox port is taken on the next run', async () => {
    const sandboxPort = await portForRestarts();
    const first = await listen(dir.path, '--sandbox-port', String(sandboxPort));
    const { publicUrl, secret } = first.ready;
    await first.stop('SIGTERM');
    // Something else on the port: the embedded sandbox takes another one, over the same state file.
    const holder = createServer().listen(sandboxPort, '127.0.0.1');
    await new Promise((resolve) => holder.once('listening', resolve));
    try {
      const second = await listen(dir.path, '--sandbox-port', String(sandboxPort));
      expect(second.ready.apiBase).not.toBe(first.ready.apiBase);
      expect(second.ready.endpointId).toBe(first.ready.endpointId);
      expect(second.stderr).not.toContain('Deleting endpoint');
      const body = envelope('evt_moved_sandbox');
      expect((await post(publicUrl, body, signed(body, secret))).status).toBe(201);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('reconnects by itself after the relay restarts', async () => {
    // The relay comes back on the same port: one no other test can be given meanwhile.
    const port = await portForRestarts();
    await relay.close();
    useRelay(await relayOn(port));
    const proc = await listen();
    const { publicUrl, secret } = proc.ready;
    await relay.close();
    await proc.waitForLine((l) => l.event === 'relay' && l.state === 'disconnected');
    useRelay(await relayOn(port));
    await proc.waitForLine(
      (l) =>
        l.event === 'relay' &&
        l.state === 'connected' &&
        proc.lines.indexOf(l) > proc.lines.findIndex((x) => x.state === 'disconnected'),
    );
    const body = envelope('evt_after_restart');
    expect((await post(publicUrl, body, signed(body, secret))).status).toBe(201);
  });

  it('answers 404 for a channel that never had a listener, and for malformed ids', async () => {
    expect((await post(`${relay.url}/c/${channelFor('x'.repeat(43))}`, '{}')).status).toBe(404);
    expect((await post(`${relay.url}/c/short`, '{}')).status).toBe(404);
    expect((await post(`${relay.url}/elsewhere`, '{}')).status).toBe(404);
  });

  it('refuses a token that does not own the channel, or is too short', async () => {
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/connect`, { headers });
        ws.once('open', () => {
          ws.close();
          resolve(101);
        });
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('error', () => resolve(0));
      });
    const token = 'a'.repeat(43);
    expect(await status({ authorization: `Bearer ${token}`, 'x-clockhook-channel': channelFor('b'.repeat(43)) })).toBe(
      401,
    );
    expect(await status({ authorization: 'Bearer short', 'x-clockhook-channel': channelFor('short') })).toBe(401);
    expect(await status({})).toBe(401);
    expect(await status({ authorization: `Bearer ${token}`, 'x-clockhook-channel': channelFor(token) })).toBe(101);
  });

  it('answers 100 concurrent requests on one channel, each with its own answer', async () => {
    const proc = await listen();
    const { publicUrl, secret } = proc.ready;
    const bodies = Array.from({ length: 100 }, (_, i) => envelope(`evt_c${i}`));
    const results = await Promise.all(bodies.map((body) => post(publicUrl, body, signed(body, secret))));
    expect(results.map((r) => r.status)).toEqual(bodies.map(() => 201));
    expect(results.map((r) => r.text)).toEqual(bodies);
  });

  it('refuses an oversize body with 413 and keeps the channel working', async () => {
    await relay.close();
    useRelay(await relayOn(0, { maxBody: 64 * 1024 }));
    const proc = await listen();
    const { publicUrl, secret } = proc.ready;
    const big = Buffer.alloc(100 * 1024, 'x');
    expect((await post(publicUrl, big, signed(big, secret))).status).toBe(413);
    const body = envelope('evt_small');
    expect((await post(publicUrl, body, signed(body, secret))).status).toBe(201);
  });

  it('carries the sandbox delivery end to end through the relay', async () => {
    const proc = await listen();
    const event = JSON.parse((await runCli(['trigger', 'schedule.published', '--json'], { cwd: dir.path })).stdout);
    const line = await proc.waitForLine((l) => l.event === 'delivery');
    expect(line).toMatchObject({ eventId: event.id, signature: 'valid', status: 201 });
    const shown = JSON.parse((await runCli(['events', 'get', event.id, '--json'], { cwd: dir.path })).stdout);
    expect(shown.delivery_attempts[0].statusCode).toBe(201);
    expect(logs.some((l) => l.status === 201 && l.channel === proc.ready.publicUrl.split('/').at(-1))).toBe(true);
  });

  it('lets a second listener with the token replace the first, which exits 1 saying why', async () => {
    const first = await listen();
    const other = await tempDir();
    await mkdir(join(other.path, '.clockhook'), { recursive: true });
    await cp(join(dir.path, '.clockhook', 'relay.json'), join(other.path, '.clockhook', 'relay.json'));
    const second = await startListenProcess(['--relay', relay.url, '--forward-to', app.url], other.path);
    procs.push(second);
    expect(second.ready.publicUrl).toBe(first.ready.publicUrl);
    expect(await first.exited).toBe(1);
    expect(first.stderr).toContain('Another clockhook listen connected with this channel token');
    await second.stop('SIGKILL');
    await other.remove();
  });

  it('gives up after --relay-give-up seconds without the relay, exit 1', async () => {
    const proc = await listen(dir.path, '--relay-give-up', '1');
    await relay.close();
    expect(await proc.exited).toBe(1);
    expect(proc.stderr).toContain('Gave up on the relay');
  });

  it('refuses to start when the relay cannot be reached, naming it', async () => {
    const url = relay.url;
    await relay.close();
    const res = await runCli(
      ['listen', '--port', '0', '--sandbox-port', '0', '--inspector-port', '0', '--relay', url, '--json'],
      { cwd: dir.path },
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`could not connect to the relay at ${url}`);
    useRelay(await relayOn());
  });

  it('serves /healthz', async () => {
    const res = await fetch(`${relay.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, channels: 0 });
  });
});
