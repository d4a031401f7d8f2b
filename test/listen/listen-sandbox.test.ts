import { execFileSync } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/index.js';
import { verifySignature } from '../../src/contract/index.js';
import { startListen } from '../../src/listen/index.js';
import { startRelayServer } from '../../src/relay/index.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli, type SpawnedCli, spawnCli } from '../helpers/cli.js';
import { postSigned, readCaptures, startListenProcess } from '../helpers/listen.js';
import { portForRestarts } from '../helpers/ports.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';
import { recordingLogger } from '../helpers/logger.js';
import { envelopeBody } from '../helpers/delivery.js';

let dir: { path: string; remove: () => Promise<void> };
let app: Receiver;
const procs: SpawnedCli[] = [];
const sandboxes: Sandbox[] = [];

beforeEach(async () => {
  dir = await tempDir();
  app = await startReceiver((_r, res) => {
    res.writeHead(202);
    res.end('queued');
  });
});
afterEach(async () => {
  for (const proc of procs.splice(0)) await proc.stop('SIGKILL');
  for (const sandbox of sandboxes.splice(0)) await sandbox.close();
  await app.close();
  await dir.remove();
});

async function listen(...args: string[]) {
  const proc = await startListenProcess(args, dir.path);
  procs.push(proc);
  return proc;
}

/** A standalone sandbox in the test folder (listen finds it), with fast retries. */
async function folderSandbox(timeScale = 0.0005) {
  const sandbox = await startSandbox({
    port: 0,
    timeScale,
    dbPath: join(dir.path, '.clockhook', 'sandbox-db.json'),
    discoveryPath: join(dir.path, '.clockhook', 'sandbox.json'),
  });
  sandboxes.push(sandbox);
  return { sandbox, client: new ApiClient({ baseUrl: sandbox.apiBase, apiKey: sandbox.apiKey }) };
}

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
      expect(JSON.parse(await readFile(join(dir.path, '.clockhook', 'endpoints.json'), 'utf8'))).toEqual([]);
    });
  }

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
    const records = JSON.parse(await readFile(join(dir.path, '.clockhook', 'endpoints.json'), 'utf8'));
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
    const records = JSON.parse(await readFile(join(dir.path, '.clockhook', 'endpoints.json'), 'utf8'));
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
      const withoutIt = JSON.parse(await readFile(recordsPath, 'utf8')).filter(
        (r: { id: number }) => r.id !== elsewhere.ready.endpointId,
      );
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

  it('names another endpoint it kept that reaches this listener too, which would get every event a second time, with the command that deletes it', async () => {
    await folderSandbox();
    const relay = await startRelayServer({ port: 0, host: '127.0.0.1' });
    try {
      const port = String(await portForRestarts());
      // The relay's endpoint, made by a run on another port; then this port's own.
      const elsewhere = await listen('--relay', relay.url);
      expect(await elsewhere.stop('SIGINT')).toBe(0);
      const direct = await listen('--port', port);
      expect(direct.stderr).not.toContain('reaches this listener too');
      expect(await direct.stop('SIGINT')).toBe(0);
      // Through the relay on this port, the relay URL's endpoint is used, and this port's still delivers here.
      const both = await listen('--port', port, '--relay', relay.url);
      expect(both.ready.endpointId).toBe(elsewhere.ready.endpointId);
      await expect
        .poll(() => both.stderr)
        .toContain(
          `Endpoint ${direct.ready.endpointId} (http://127.0.0.1:${port}/) was kept by an earlier listen, and reaches this listener too: this folder's sandbox sends it every event as well as endpoint ${both.ready.endpointId}, so each comes here twice, and that copy, signed with its own secret, fails and is retried. If your app verifies with endpoint ${both.ready.endpointId}'s secret: npx clockhook endpoints delete ${direct.ready.endpointId}`,
        );
    } finally {
      await relay.close();
    }
  });

  it('says so for people when the secret stays', async () => {
    await folderSandbox();
    const port = String(await portForRestarts());
    const proc = spawnCli(['listen', '--port', port, '--sandbox-port', '0', '--inspector-port', '0', '--no-open'], {
      cwd: dir.path,
    });
    procs.push(proc);
    const line = await proc.waitForLine((l) => /^\s*Secret /.test(l.text ?? ''));
    expect(line.text).toMatch(/Secret {6}whsec_…\S{4} \(the same on the next run; npx clockhook secret prints it\)/);
  });

  it('tells the app whose secret it refuses how to get the right one whole, without stopping listen', async () => {
    app.setResponder((_r, res) => res.writeHead(401).end('bad signature'));
    const proc = await listen('--forward-to', app.url, '--port', '0');
    await runCli(['trigger', 'punch.created'], { cwd: dir.path });
    await proc.waitForLine((l) => l.event === 'delivery' && l.status === 401);
    await expect
      .poll(() => proc.stderr)
      .toMatch(
        /it may verify with another secret than clockhook, which used whsec_…\S{4} \("npx clockhook secret" prints it whole\)/,
      );
    const printed = await runCli(['secret'], { cwd: dir.path });
    expect(printed.code).toBe(0);
    const [delivery] = app.received;
    const header = delivery.headers['x-service-signature'] as string;
    expect(verifySignature({ header, payload: delivery.body, secret: printed.stdout.trim() })).toMatchObject({
      ok: true,
    });
  });

  it('names the endpoint in the command that prints its secret when several are on file', async () => {
    await folderSandbox();
    const earlier = await listen('--keep-endpoint', '--port', '0');
    expect(await earlier.stop('SIGINT')).toBe(0);
    app.setResponder((_r, res) => res.writeHead(401).end('bad signature'));
    const proc = spawnCli(['listen', '--forward-to', app.url, '--port', '0', '--inspector-port', '0', '--no-open'], {
      cwd: dir.path,
    });
    procs.push(proc);
    const endpoint = await proc.waitForLine((l) => /^\s*Endpoint /.test(l.text ?? ''));
    const id = /Endpoint\s+(\d+)/.exec(endpoint.text ?? '')?.[1] ?? 'no id';
    expect(id).not.toBe(String(earlier.ready.endpointId));
    const secret = await proc.waitForLine((l) => /^\s*Secret /.test(l.text ?? ''));
    expect(secret.text).toMatch(new RegExp(`Secret {6}whsec_…\\S{4} \\(npx clockhook secret ${id} prints it\\)`));
    await runCli(['trigger', 'punch.created'], { cwd: dir.path });
    await expect.poll(() => proc.stderr).toContain(`"npx clockhook secret ${id}" prints it whole`);
    const printed = await runCli(['secret', id], { cwd: dir.path });
    expect(printed.code).toBe(0);
    const [delivery] = app.received;
    expect(
      verifySignature({
        header: delivery.headers['x-service-signature'] as string,
        payload: delivery.body,
        secret: printed.stdout.trim(),
      }),
    ).toMatchObject({ ok: true });
  });

  it('keeps it with --keep-endpoint and reuses it (secret on file) on the next run', async () => {
    const { client } = await folderSandbox();
    const first = await listen('--keep-endpoint', '--port', '0');
    expect(await first.stop('SIGTERM')).toBe(0);
    expect((await client.listEndpoints()).data).toHaveLength(1);
    const records = JSON.parse(await readFile(join(dir.path, '.clockhook', 'endpoints.json'), 'utf8'));
    expect(records).toEqual([
      expect.objectContaining({ id: first.ready.endpointId, secret: expect.stringMatching(/^whsec_/) }),
    ]);
    expect((await stat(join(dir.path, '.clockhook', 'endpoints.json'))).mode & 0o777).toBe(0o600);
  });

  it('keeps its folder out of git: .clockhook/ ignores itself, secrets and captures included', async () => {
    execFileSync('git', ['init', '-q'], { cwd: dir.path });
    const proc = await listen('--keep-endpoint', '--port', '0');
    await runCli(['trigger', 'punch.created'], { cwd: dir.path });
    await proc.waitForLine((l) => l.event === 'delivery');
    expect(await proc.stop('SIGINT')).toBe(0);
    expect(await readdir(join(dir.path, '.clockhook'))).toEqual(
      expect.arrayContaining(['.gitignore', 'endpoints.json', 'captures.json', 'sandbox-db.json']),
    );
    expect(
      execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: dir.path, encoding: 'utf8' }),
    ).toBe('');
    expect((await stat(join(dir.path, '.clockhook', '.gitignore'))).mode & 0o777).toBe(0o600);
    // A file of the project's own beside it is seen as ever.
    await writeFile(join(dir.path, 'app.js'), '');
    expect(
      execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: dir.path, encoding: 'utf8' }),
    ).toBe('?? app.js\n');
  });

  it('after a crash, reuses the endpoint whose secret is on file', async () => {
    const { client } = await folderSandbox();
    // A fixed free port, so the second run registers the same URL.
    const port = await portForRestarts();
    const first = await listen('--port', String(port));
    await first.stop('SIGKILL');
    const second = await listen('--port', String(port));
    expect(second.ready.endpointId).toBe(first.ready.endpointId);
    expect((await client.listEndpoints()).data).toHaveLength(1);
    // And it verifies with the secret on file.
    await runCli(['trigger', 'shift.published'], { cwd: dir.path });
    expect(await second.waitForLine((l) => l.event === 'delivery')).toMatchObject({ signature: 'valid', status: 200 });
  });

  it('refuses to start over a records file it cannot read, which it would otherwise overwrite with new secrets', async () => {
    const { client } = await folderSandbox();
    const port = String(await portForRestarts());
    const first = await listen('--port', port);
    expect(await first.stop('SIGINT')).toBe(0);
    const path = join(dir.path, '.clockhook', 'endpoints.json');
    const broken = `${(await readFile(path, 'utf8')).trimEnd().slice(0, -1)},\n]\n`; // a trailing comma, by hand
    await writeFile(path, broken);
    const res = await runCli(
      ['listen', '--json', '--port', port, '--sandbox-port', '0', '--inspector-port', '0', '--no-open'],
      { cwd: dir.path },
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot read .clockhook/endpoints.json (it is not valid JSON: `);
    expect(res.stderr).toContain(
      'mend it, or move it aside, and listen then registers new endpoints, with new secrets for your app.',
    );
    expect(await readFile(path, 'utf8')).toBe(broken);
    expect((await client.listEndpoints()).data.map((e) => e.id)).toEqual([first.ready.endpointId]);
    const secret = await runCli(['secret'], { cwd: dir.path });
    expect(secret.code).toBe(1);
    expect(secret.stderr).toContain('cannot read .clockhook/endpoints.json (it is not valid JSON: ');
  });

  it('deletes and recreates an earlier endpoint of its own whose secret is not on file', async () => {
    const { client } = await folderSandbox();
    const port = String(await portForRestarts()); // the second run registers the same URL
    const proc = await listen('--keep-endpoint', '--port', port);
    await proc.stop('SIGKILL');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir.path, '.clockhook', 'endpoints.json'), '[]');
    const again = await listen('--port', port);
    expect(again.ready.endpointId).not.toBe(proc.ready.endpointId);
    expect((await client.listEndpoints()).data.map((e) => e.id)).toEqual([again.ready.endpointId]);
    expect(again.stderr).toContain(`Deleting endpoint ${proc.ready.endpointId}`);
  });

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

async function folderKey() {
  return { apiKey: sandboxes[0].apiKey };
}

describe('listen with an API key', () => {
  it('registers --public-url, masks the secret for people, deletes the endpoint on exit', async () => {
    const { sandbox, client } = await folderSandbox();
    const proc = spawnCli(
      [
        'listen',
        '--port',
        '0',
        '--api-key',
        sandbox.apiKey,
        '--api-base',
        sandbox.apiBase,
        '--public-url',
        'https://tunnel.example.com/h',
        '--events',
        'punch.created',
      ],
      { cwd: dir.path },
    );
    procs.push(proc);
    const secretLine = await proc.waitForLine((l) => typeof l.text === 'string' && l.text.includes('Secret'));
    const [record] = JSON.parse(await readFile(join(dir.path, '.clockhook', 'endpoints.json'), 'utf8'));
    expect(secretLine.text).toContain(`whsec_…${record.secret.slice(-4)}`);
    expect(proc.lines.map((l) => l.text).join('\n')).not.toContain(record.secret);
    expect(proc.stderr).not.toContain(record.secret);
    const endpoints = (await client.listEndpoints()).data;
    expect(endpoints).toEqual([
      expect.objectContaining({ id: record.id, url: 'https://tunnel.example.com/h', enabledEvents: ['punch.created'] }),
    ]);
    expect(await proc.stop('SIGTERM')).toBe(0);
    expect((await client.listEndpoints()).data).toEqual([]);
  });

  it('prints the ready line with publicUrl, and the secret only with --print-secret', async () => {
    const { sandbox } = await folderSandbox();
    const args = [
      '--api-key',
      sandbox.apiKey,
      '--api-base',
      sandbox.apiBase,
      '--public-url',
      'https://t.example.com/h',
    ];
    const masked = await listen(...args);
    expect(masked.ready).toMatchObject({
      publicUrl: 'https://t.example.com/h',
      sandbox: false,
      apiBase: sandbox.apiBase,
    });
    expect(masked.ready.secret).toBeUndefined();
    await masked.stop('SIGTERM');
    const shown = await listen(...args, '--print-secret');
    expect(shown.ready.secret).toMatch(/^whsec_/);
  });

  it('warns when --public-url is outside --path, where every delivery through a tunnel would get 404', async () => {
    const { sandbox } = await folderSandbox();
    const args = ['--api-key', sandbox.apiKey, '--api-base', sandbox.apiBase, '--path', '/hooks'];
    const outside = await listen(...args, '--public-url', 'https://t.example.com');
    await expect
      .poll(() => outside.stderr)
      .toContain(
        '--public-url https://t.example.com is outside --path /hooks: through a tunnel that passes paths as they are, every delivery arrives at / and gets 404. Register a URL under the path instead, such as --public-url https://t.example.com/hooks',
      );
    await outside.stop('SIGTERM');
    const under = await listen(...args, '--public-url', 'https://t.example.com/hooks');
    expect(under.stderr).not.toContain('is outside --path');
  });

  it("an endpoint's description says what becomes of it, and follows the run that reuses it", async () => {
    const { sandbox, client } = await folderSandbox();
    const args = [
      '--api-key',
      sandbox.apiKey,
      '--api-base',
      sandbox.apiBase,
      '--public-url',
      'https://t.example.com/k',
    ];
    const keeping = await listen(...args, '--keep-endpoint');
    expect(await keeping.stop('SIGTERM')).toBe(0);
    expect(await client.getEndpoint(keeping.ready.endpointId)).toMatchObject({
      description: 'clockhook listen (created automatically; kept for its next run)',
    });

    const deleting = await listen(...args);
    expect(deleting.ready.endpointId).toBe(keeping.ready.endpointId);
    expect(await client.getEndpoint(deleting.ready.endpointId)).toMatchObject({
      description: 'clockhook listen (created automatically; deleted when it exits)',
    });
    expect(await deleting.stop('SIGTERM')).toBe(0);
    expect((await client.listEndpoints()).data).toEqual([]);
  });

  it('reuses its kept endpoint, secret and all, whichever way the same --api-base is spelled', async () => {
    const { sandbox } = await folderSandbox();
    const args = (base: string) => [
      '--api-key',
      sandbox.apiKey,
      '--api-base',
      base,
      '--public-url',
      'https://t.example.com/spelled',
      '--keep-endpoint',
      '--print-secret',
    ];
    const first = await listen(...args(`${sandbox.apiBase}/`));
    expect(await first.stop('SIGTERM')).toBe(0);
    const second = await listen(...args(sandbox.apiBase));
    expect(second.ready).toMatchObject({ endpointId: first.ready.endpointId, secret: first.ready.secret });
    expect(second.stderr).not.toContain('Deleting endpoint');
    expect(await second.stop('SIGTERM')).toBe(0);
    const records = JSON.parse(await readFile(join(dir.path, '.clockhook', 'endpoints.json'), 'utf8'));
    expect(records).toEqual([expect.objectContaining({ apiBase: sandbox.apiBase, id: first.ready.endpointId })]);
  });

  it('exits 1 with a clear message when the key is refused', async () => {
    const { sandbox } = await folderSandbox();
    const res = await runCli(
      [
        'listen',
        '--port',
        '0',
        '--api-key',
        'tt_live_wrong',
        '--api-base',
        sandbox.apiBase,
        '--public-url',
        'https://t.example.com/h',
      ],
      { cwd: dir.path },
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('401 api_key_invalid');
  });

  it('exits 2 on bad usage', async () => {
    for (const args of [
      ['--api-key', 'tt_live_x'],
      ['--endpoint', '3'],
      ['--forward-to', 'ftp://x'],
      ['--tolerance', '-1'],
      ['--max-captures', '0'],
      ['--max-buffer', 'lots'],
      ['--path', '?x'],
      ['--api-key', 'tt_live_x', '--api-base', 'ftp://api.example.com'],
      ['--relay', 'nope'],
      ['--relay', 'ftp://relay.test'],
      ['--relay', 'https://relay.test/hooks'],
      ['--relay', 'https://relay.test/?a'],
      ['--public-url', 'abc123.ngrok.app', '--api-key', 'tt_live_x', '--api-base', 'http://127.0.0.1:8'],
      ['--inspector-port', '6000'],
      ['--sandbox-port', '6667'],
      ['--time-scale', '0'],
      ['--time-scale', 'fast'],
      ['--time-scale', '0.01', '--api-key', 'tt_live_x', '--api-base', 'https://api.example.com'],
    ]) {
      const res = await runCli(['listen', '--port', '0', ...args], { cwd: dir.path });
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr, args.join(' ')).toMatch(/^clockhook: /);
    }
    // The sandbox would refuse the endpoint after everything had started: said at once instead.
    const typo = await runCli(['listen', '--port', '0', '--events', 'punch.creatd'], { cwd: dir.path });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /^clockhook: --events: unknown event type "punch\.creatd" \(did you mean punch\.created\?\)/,
    );
    const small = await runCli(['listen', '--port', '0', '--max-buffer', '1mb'], { cwd: dir.path });
    expect(small.code).toBe(2);
    expect(small.stderr).toContain(
      '--max-buffer must be at least 5mb, the largest body a delivery may have (got 1mb).',
    );
    // A browser would not open the page there (ERR_UNSAFE_PORT), nor fetch reach a sandbox.
    const unsafe = await runCli(['listen', '--port', '0', '--inspector-port', '6000'], { cwd: dir.path });
    expect(unsafe).toMatchObject({
      code: 2,
      stderr:
        'clockhook: --inspector-port 6000: a browser cannot reach that port (the Fetch standard blocks it, with 9, 6667 and others); pick another --inspector-port.\n',
    });
    // A --db that is not a store is left as it is, with exit 2 and what to give instead.
    await writeFile(join(dir.path, 'package.json'), '{"name":"my-app"}');
    const foreign = await runCli(
      ['listen', '--port', '0', '--sandbox-port', '0', '--inspector-port', '0', '--db', 'package.json'],
      { cwd: dir.path },
    );
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toBe(
      'clockhook: package.json is not a clockhook capture store: it does not begin as clockhook writes one, so it is left as it is. Give --db a file clockhook made, or a path where no file is yet.\n',
    );
    expect(await readFile(join(dir.path, 'package.json'), 'utf8')).toBe('{"name":"my-app"}');
    const folder = await runCli(
      ['listen', '--port', '0', '--sandbox-port', '0', '--inspector-port', '0', '--db', '.'],
      { cwd: dir.path },
    );
    expect(folder.code).toBe(2);
    expect(folder.stderr).toBe('clockhook: . is a folder, not a file. Give --db a file path, such as captures.json.\n');
    // Nineteen CLI starts, one after the other: a few seconds each on a busy two-core machine.
  }, 90_000);

  it('never writes the API key to the capture file', async () => {
    const { sandbox } = await folderSandbox();
    const proc = await listen('--api-key', sandbox.apiKey, '--api-base', sandbox.apiBase, '--secret', 'whsec_k');
    const body = '{"id":"evt_k"}';
    await postSigned(proc.ready.listener, body, 'whsec_k');
    await proc.waitForLine((l) => l.event === 'delivery');
    await proc.stop('SIGTERM');
    const file = await readFile(join(dir.path, '.clockhook', 'captures.json'), 'utf8');
    expect(file).toContain('evt_k');
    expect(file).not.toContain(sandbox.apiKey);
  });
});

describe('crash safety', () => {
  it('kill -9 during a burst loses no delivery that was answered 2xx', async () => {
    const secret = 'whsec_burst';
    // Capture-only: the answer follows the capture write directly, so an early answer would show.
    const proc = await listen('--secret', secret);
    const answered: string[] = [];
    let stop = false;
    const sender = async (worker: number) => {
      for (let i = 0; !stop; i++) {
        const body = envelopeBody(`evt_${worker}_${i}`, { created: 1 });
        try {
          const res = await postSigned(proc.ready.listener, body, secret);
          if (res.status >= 200 && res.status < 300) answered.push(`evt_${worker}_${i}`);
        } catch {
          return; // the listener is gone
        }
      }
    };
    const senders = Array.from({ length: 8 }, (_, w) => sender(w));
    await proc.waitForLine(() => proc.lines.filter((l) => l.event === 'delivery').length >= 300);
    proc.child.kill('SIGKILL');
    stop = true;
    await Promise.all(senders);
    await proc.exited;
    expect(answered.length).toBeGreaterThanOrEqual(300);
    const stored = new Set((await readCaptures(dir.path)).map((c) => c.envelope?.id));
    const lost = answered.filter((id) => !stored.has(id));
    expect(lost).toEqual([]);
    // And it starts again on that store.
    const again = await listen('--secret', secret);
    expect(again.ready.listener).toMatch(/^http:/);
  });
});
