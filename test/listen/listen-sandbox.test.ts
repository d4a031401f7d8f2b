// listen with the embedded sandbox: the round trip, its endpoint at exit, and what it says of the service.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startListen } from '../../src/listen/index.js';
import { runCli } from '../helpers/cli.js';
import { readCaptures, readEndpointRecords, startListenProcess } from '../helpers/listen.js';
import { recordingLogger } from '../helpers/logger.js';
import { app, dir, folderKey, folderSandbox, listen, procs, sandboxes, useListenFolder } from './folder-rig.js';

useListenFolder();

describe('listen with the embedded sandbox (no key anywhere)', () => {
  it('registers an endpoint for itself; a trigger makes the full round trip', async () => {
    const proc = await listen('--forward-to', app.url);
    expect(proc.ready).toMatchObject({
      sandbox: true,
      apiBase: expect.stringMatching(/^http:\/\/127\.0\.0\.1:/),
      endpointId: expect.any(Number),
    });
    expect(proc.ready.secret).toBeUndefined();

    const triggered = await runCli(['trigger', 'punch.created', '--json'], { cwd: dir.path });
    expect(triggered.code).toBe(0);
    const event = JSON.parse(triggered.stdout);
    const line = await proc.waitForLine((l) => l.event === 'delivery');
    expect(line).toMatchObject({ eventId: event.id, type: 'punch.created', signature: 'valid', status: 202 });
    expect(JSON.parse(app.received[0].body.toString()).id).toBe(event.id);

    // The sandbox saw the app's own status.
    const shown = JSON.parse((await runCli(['events', 'get', event.id, '--json'], { cwd: dir.path })).stdout);
    expect(shown.delivery_attempts[0]).toMatchObject({ statusCode: 202, responseBody: 'queued' });
  });

  for (const signal of ['SIGINT', 'SIGHUP'] as const) {
    it(`deletes the endpoint it created for --port 0 (a URL no later run has) on ${signal} and exits 0`, async () => {
      const { client } = await folderSandbox();
      const proc = await listen();
      expect((await client.listEndpoints()).data.map((e) => e.id)).toEqual([proc.ready.endpointId]);
      expect(await proc.stop(signal)).toBe(0);
      expect((await client.listEndpoints()).data).toEqual([]);
      expect(await readEndpointRecords(dir.path)).toEqual([]);
    });
  }

  it("--time-scale hurries the embedded sandbox's retries, and events get says when at that pace", async () => {
    await app.close();
    // 1 min becomes 60 ms: the app is down (answered 502 at once, not held), and the service's first retry
    // follows its first attempt at once.
    const proc = await listen('--forward-to', app.url, '--time-scale', '0.001', '--wait-for-app', '0');
    const event = JSON.parse((await runCli(['trigger', 'punch.created', '--json'], { cwd: dir.path })).stdout);
    await proc.waitForLine(
      () => proc.lines.filter((l) => l.event === 'delivery' && l.eventId === event.id).length >= 2,
    );
    const retry = proc.lines.filter((l) => l.event === 'delivery' && l.eventId === event.id)[1];
    expect(retry.story).toMatchObject({ kind: 'retry', retry: 1, words: 'retry 1' });
    // At this pace the next attempt may be on its way at the moment events get asks: between attempts it is failing.
    const stateNow = async () =>
      JSON.parse((await runCli(['events', 'get', event.id, '--json'], { cwd: dir.path })).stdout).story.state;
    await expect.poll(stateNow, { timeout: 20_000 }).toBe('failing');
  }, 40_000);

  it('answers 502 when the app is down; the sandbox records the failure and retries', async () => {
    const { client } = await folderSandbox();
    await app.close();
    // Answered 502 at once, not held for the app (listen --wait-for-app: tested in wait-for-app.test.ts).
    const proc = await listen('--forward-to', app.url, '--wait-for-app', '0');
    const triggered = JSON.parse((await runCli(['trigger', 'punch.created', '--json'], { cwd: dir.path })).stdout);
    await proc.waitForLine(() => proc.lines.filter((l) => l.event === 'delivery').length >= 2);
    const event = await client.getEvent(triggered.id);
    expect(event.delivery_attempts[0]).toMatchObject({ statusCode: 502 });
    expect(event.delivery_attempts.length).toBeGreaterThanOrEqual(1);
    const captures = await readCaptures(dir.path);
    expect(captures.length).toBeGreaterThanOrEqual(2);
    // The app took neither: the second is a retry, not a duplicate.
    expect(captures[1]).toMatchObject({ kind: 'retry', retry: 1, repeatOf: captures[0].id, duplicateOf: null });
  });

  it('says when the service disables the endpoint during the run, and when it is enabled again', async () => {
    // Retries 10,000 times faster than the contract's: each delivery's five attempts take under half a second.
    const { client } = await folderSandbox(0.0001);
    await app.close();
    const logger = recordingLogger();
    const { warnings } = logger;
    const session = await startListen({
      forwardTo: app.url,
      port: 0,
      inspector: false,
      stateDir: join(dir.path, '.clockhook'),
      logger,
      endpointCheck: { settleMs: 50, minIntervalMs: 200 },
      waitForAppMs: 0, // each attempt fails at once: the app is down for good
    });
    try {
      const id = session.ready.endpointId as number;
      for (let i = 0; i < 10; i++) await client.request('POST', '/sandbox/events', { body: { type: 'punch.created' } });
      // Ten deliveries fail all five attempts (the app is down): the service disables the endpoint.
      await expect
        .poll(() => warnings.find((w) => w.startsWith(`Endpoint ${id} is now disabled`)), { timeout: 10_000 })
        .toContain(`npx clockhook endpoints enable ${id}`);
      expect(session.endpoint?.status).toBe('disabled');
      expect((await client.getEndpoint(id)).status).toBe('disabled');
      // Enabled from elsewhere (another terminal): seen at the next failed delivery.
      await client.updateEndpoint(id, { status: 'enabled' });
      await client.request('POST', '/sandbox/events', { body: { type: 'punch.created' } });
      await expect
        .poll(() => warnings.filter((w) => w === `Endpoint ${id} is enabled again; the service delivers to it.`))
        .toHaveLength(1);
    } finally {
      await session.close();
    }
  });

  it('warns at start when the endpoint it uses is disabled, naming the command to fix it', async () => {
    const { client } = await folderSandbox();
    const created = await client.createEndpoint({ url: 'https://example.com/h', enabledEvents: ['*'] });
    await client.updateEndpoint(created.id, { status: 'disabled' });
    const proc = await startListenProcess(
      [
        '--api-key',
        (await folderKey()).apiKey,
        '--api-base',
        sandboxes[0].apiBase,
        '--endpoint',
        String(created.id),
        '--secret',
        created.secret as string,
      ],
      dir.path,
    );
    procs.push(proc);
    expect(proc.ready.endpointId).toBe(created.id);
    expect(proc.stderr).toContain(`npx clockhook endpoints enable ${created.id}`);
    expect(await proc.stop('SIGTERM')).toBe(0);
    // Not ours: never deleted.
    expect((await client.getEndpoint(created.id)).id).toBe(created.id);
  });
});
