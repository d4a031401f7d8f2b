// listen with the embedded sandbox: the endpoint it keeps for its next run, found again and moved with its URL.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/contract/index.js';
import { startRelayServer } from '../../src/relay/index.js';
import { runCli } from '../helpers/cli.js';
import { readEndpointRecords } from '../helpers/listen.js';
import { portForRestarts } from '../helpers/ports.js';
import { app, dir, folderSandbox, listen, useListenFolder } from './folder-rig.js';

useListenFolder();

describe('listen keeps its endpoint for the next run', () => {
  it('keeps the secret when the next run has another sandbox of the folder (clockhook sandbox on its own port, then the embedded one)', async () => {
    const { sandbox } = await folderSandbox();
    const port = String(await portForRestarts());
    const first = await listen('--port', port, '--print-secret');
    expect(await first.stop('SIGINT')).toBe(0);
    await sandbox.close();
    // The same state file, so the same endpoint, on another port: its record is filed under the one it had.
    const second = await listen('--port', port, '--print-secret');
    expect(second.ready).toMatchObject({ endpointId: first.ready.endpointId, secret: first.ready.secret });
    expect(second.ready.apiBase).not.toBe(first.ready.apiBase);
    expect(second.stderr).not.toContain('Deleting endpoint');
    // One record for the URL, under the base this run files it under (the embedded sandbox's port asked for).
    const records = await readEndpointRecords(dir.path);
    expect(records).toEqual([
      expect.objectContaining({
        apiBase: 'http://127.0.0.1:0',
        id: first.ready.endpointId,
        secret: first.ready.secret,
        url: `http://127.0.0.1:${port}/`,
      }),
    ]);
  });

  it('forgets the record of an endpoint deleted since, whichever sandbox of the folder it was filed under', async () => {
    const { sandbox, client } = await folderSandbox();
    const port = String(await portForRestarts());
    const first = await listen('--port', port, '--print-secret');
    expect(await first.stop('SIGINT')).toBe(0);
    await client.deleteEndpoint(first.ready.endpointId);
    await sandbox.close();
    const second = await listen('--port', port, '--print-secret');
    expect(second.ready.secret).not.toBe(first.ready.secret);
    const records = await readEndpointRecords(dir.path);
    expect(records).toEqual([
      expect.objectContaining({
        apiBase: 'http://127.0.0.1:0',
        id: second.ready.endpointId,
        secret: second.ready.secret,
      }),
    ]);
  });

  it('names an endpoint an earlier run kept for a port nothing listens on any more, with the command that deletes it', async () => {
    const { client } = await folderSandbox();
    const [before, now] = [String(await portForRestarts()), String(await portForRestarts())];
    const first = await listen('--port', before);
    // While that listen runs, its endpoint is no one's noise.
    const beside = await listen('--port', now, '--db', join(dir.path, 'beside.json'));
    expect(beside.ready.endpointId).not.toBe(first.ready.endpointId);
    expect(beside.stderr).not.toContain('was kept by an earlier listen');
    expect(await beside.stop('SIGINT')).toBe(0);
    expect(await first.stop('SIGINT')).toBe(0);
    const later = await listen('--port', now);
    expect(later.stderr).toContain(
      `Endpoint ${first.ready.endpointId} (http://127.0.0.1:${before}/) was kept by an earlier listen, and nothing listens on port ${before} now: this folder's sandbox sends it every event too, and each fails and is retried, as the service would. If you no longer use that port: npx clockhook endpoints delete ${first.ready.endpointId}`,
    );
    expect(later.stderr).not.toContain(`Endpoint ${later.ready.endpointId} (`);
    // Disabled, it gets no events: nothing to say.
    expect(await later.stop('SIGINT')).toBe(0);
    await client.updateEndpoint(first.ready.endpointId, { status: 'disabled' });
    const quiet = await listen('--port', now);
    expect(quiet.stderr).not.toContain('was kept by an earlier listen');
  });

  it('on a fixed port, keeps its endpoint and so its secret for the next run: the app sets it once', async () => {
    const { client } = await folderSandbox();
    const port = String(await portForRestarts());
    const first = await listen('--port', port, '--print-secret');
    expect(await first.stop('SIGINT')).toBe(0);
    const [kept] = (await client.listEndpoints()).data;
    expect(kept).toMatchObject({
      id: first.ready.endpointId,
      description: 'clockhook listen (created automatically; kept for its next run)',
    });

    // Subscribed to what this run asks for.
    const second = await listen('--port', port, '--print-secret', '--forward-to', app.url, '--events', 'punch.created');
    expect(second.ready).toMatchObject({ endpointId: first.ready.endpointId, secret: first.ready.secret });
    expect((await client.listEndpoints()).data).toEqual([
      expect.objectContaining({ id: first.ready.endpointId, enabledEvents: ['punch.created'] }),
    ]);
    await runCli(['trigger', 'punch.created'], { cwd: dir.path });
    expect(await second.waitForLine((l) => l.event === 'delivery')).toMatchObject({ signature: 'valid', status: 202 });
    // The app, still verifying with the secret the first run showed, accepts it.
    const [delivery] = app.received;
    expect(
      verifySignature({
        header: delivery.headers['x-service-signature'] as string,
        payload: delivery.body,
        secret: first.ready.secret,
      }),
    ).toMatchObject({ ok: true });
  });

  it('moves its kept endpoint when --path changes, secret and all, instead of leaving one that would fail every event', async () => {
    const { client } = await folderSandbox();
    const port = String(await portForRestarts());
    const first = await listen('--port', port, '--path', '/a', '--print-secret');
    expect(await first.stop('SIGINT')).toBe(0);
    const second = await listen('--port', port, '--path', '/b', '--print-secret');
    expect(second.ready).toMatchObject({ endpointId: first.ready.endpointId, secret: first.ready.secret });
    expect((await client.listEndpoints()).data).toEqual([
      expect.objectContaining({ id: first.ready.endpointId, url: `http://127.0.0.1:${port}/b` }),
    ]);
    expect(second.stderr).toContain(
      `Endpoint ${first.ready.endpointId} now points at http://127.0.0.1:${port}/b (it was http://127.0.0.1:${port}/a); its secret is the same.`,
    );
    await runCli(['trigger', 'punch.created'], { cwd: dir.path });
    expect(await second.waitForLine((l) => l.event === 'delivery')).toMatchObject({ signature: 'valid', status: 200 });
  });

  it('moves its kept endpoint to a relay URL and back, secret and all, instead of a second endpoint that gets every event too', async () => {
    const { client } = await folderSandbox();
    const relay = await startRelayServer({ port: 0, host: '127.0.0.1' });
    try {
      const port = String(await portForRestarts());
      const direct = await listen('--port', port, '--print-secret', '--forward-to', app.url);
      expect(await direct.stop('SIGINT')).toBe(0);
      const relayed = await listen('--port', port, '--print-secret', '--forward-to', app.url, '--relay', relay.url);
      expect(relayed.ready).toMatchObject({ endpointId: direct.ready.endpointId, secret: direct.ready.secret });
      // One endpoint: the sandbox sends each event once, through the relay.
      expect((await client.listEndpoints()).data).toEqual([
        expect.objectContaining({ id: direct.ready.endpointId, url: relayed.ready.publicUrl }),
      ]);
      await expect
        .poll(() => relayed.stderr)
        .toContain(
          `Endpoint ${direct.ready.endpointId} now points at ${relayed.ready.publicUrl} (it was http://127.0.0.1:${port}/); its secret is the same.`,
        );
      const event = JSON.parse((await runCli(['trigger', 'punch.created', '--json'], { cwd: dir.path })).stdout);
      expect(await relayed.waitForLine((l) => l.event === 'delivery')).toMatchObject({
        eventId: event.id,
        signature: 'valid',
        status: 202,
      });
      expect(await relayed.stop('SIGINT')).toBe(0);
      // A run on another port through the same relay uses that endpoint as it is: it stays this port's.
      const otherPort = await listen('--relay', relay.url);
      expect(otherPort.ready.endpointId).toBe(direct.ready.endpointId);
      expect(await otherPort.stop('SIGINT')).toBe(0);

      const back = await listen('--port', port, '--print-secret');
      expect(back.ready).toMatchObject({ endpointId: direct.ready.endpointId, secret: direct.ready.secret });
      expect((await client.listEndpoints()).data).toEqual([
        expect.objectContaining({ id: direct.ready.endpointId, url: `http://127.0.0.1:${port}/` }),
      ]);
    } finally {
      await relay.close();
    }
    // Four listen processes and a trigger, one after the other: over 15 s once beside a fresh-clone CI.
  }, 60_000);

  it('moves its kept endpoint to a relay URL where an earlier listen left one without its secret on file, and refuses to take one it did not create', async () => {
    const { client } = await folderSandbox();
    const relay = await startRelayServer({ port: 0, host: '127.0.0.1' });
    try {
      const port = String(await portForRestarts());
      const direct = await listen('--port', port, '--print-secret');
      expect(await direct.stop('SIGINT')).toBe(0);
      // A run on another port made the relay URL's endpoint; then its record was lost.
      const elsewhere = await listen('--relay', relay.url);
      expect(await elsewhere.stop('SIGINT')).toBe(0);
      const recordsPath = join(dir.path, '.clockhook', 'endpoints.json');
      const withoutIt = (await readEndpointRecords(dir.path)).filter((r) => r.id !== elsewhere.ready.endpointId);
      await writeFile(recordsPath, JSON.stringify(withoutIt));

      const relayed = await listen('--port', port, '--print-secret', '--relay', relay.url);
      expect(relayed.ready).toMatchObject({ endpointId: direct.ready.endpointId, secret: direct.ready.secret });
      await expect
        .poll(() => relayed.stderr)
        .toContain(
          `Deleting endpoint ${elsewhere.ready.endpointId} for ${relayed.ready.publicUrl}: an earlier clockhook listen created it and its secret is not on file.`,
        );
      expect((await client.listEndpoints()).data).toEqual([
        expect.objectContaining({ id: direct.ready.endpointId, url: relayed.ready.publicUrl }),
      ]);
      expect(await relayed.stop('SIGINT')).toBe(0);

      // Someone's own endpoint at that URL is left alone, and named; this port's stays where it is.
      const back = await listen('--port', port);
      expect(await back.stop('SIGINT')).toBe(0);
      const theirs = await client.createEndpoint({
        url: relayed.ready.publicUrl,
        enabledEvents: ['*'],
        description: 'theirs',
      });
      const refused = await runCli(
        ['listen', '--port', port, '--sandbox-port', '0', '--inspector-port', '0', '--no-open', '--relay', relay.url],
        { cwd: dir.path },
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `An endpoint for ${relayed.ready.publicUrl} exists already (id ${theirs.id}) and clockhook did not create it.`,
      );
      expect((await client.listEndpoints()).data.map((e) => [e.id, e.url])).toEqual(
        expect.arrayContaining([
          [theirs.id, relayed.ready.publicUrl],
          [direct.ready.endpointId, `http://127.0.0.1:${port}/`],
        ]),
      );
    } finally {
      await relay.close();
    }
    // Listen processes one after the other: over 15 s once beside a fresh-clone CI.
  }, 60_000);
});
