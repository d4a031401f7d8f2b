import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/contract/index.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { post, readCaptures, readSettledCaptures, startListenProcess } from '../helpers/listen.js';
import { tempDir } from '../helpers/sandbox.js';
import { runCli } from '../helpers/cli.js';
import { portForRestarts } from '../helpers/ports.js';
import { envelopeBody } from '../helpers/delivery.js';

const SECRET = 'whsec_direct_test_secret';
const ENVELOPE = envelopeBody('evt_direct1', { data: { id: 1, note: 'Zoë' } });

let dir: { path: string; remove: () => Promise<void> };
let app: Receiver;
let listen: Awaited<ReturnType<typeof startListenProcess>> | undefined;

beforeEach(async () => {
  dir = await tempDir();
  app = await startReceiver((_r, res) => {
    res.writeHead(201, { 'content-type': 'application/json', 'x-app': 'yes' });
    res.end('{"handled":true}');
  });
});
afterEach(async () => {
  await listen?.stop('SIGKILL');
  listen = undefined;
  await app.close();
  await dir.remove();
});

const signed = (body: string | Buffer, timestamp?: number) => ({
  'x-service-signature': signPayload({ payload: body, secret: SECRET, timestamp }),
});

async function start(...args: string[]) {
  listen = await startListenProcess(['--secret', SECRET, ...args], dir.path);
  return listen;
}

describe('listen with a known secret (offline mode)', () => {
  it('prints a ready line with every URL', async () => {
    const { ready } = await start('--forward-to', `${app.url}/hooks`);
    expect(ready).toEqual({
      event: 'ready',
      listener: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/),
      inspector: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32,}$/),
      forwardTo: `${app.url}/hooks`,
      apiBase: null,
      sandbox: false,
      endpointId: null,
      publicUrl: null,
    });
  });

  it('forwards a valid delivery byte for byte and passes the app answer back', async () => {
    const { ready } = await start('--forward-to', `${app.url}/hooks`);
    const signature = signed(ENVELOPE); // once: signing again a second later gives another header
    const res = await post(`${ready.listener}a?b=1`, ENVELOPE, {
      ...signature,
      'x-custom': 'kept',
      connection: 'keep-alive, x-drop',
      'x-drop': 'hop',
    });
    expect(res.status).toBe(201);
    expect(res.text).toBe('{"handled":true}');
    expect(res.headers.get('x-app')).toBe('yes');
    const [got] = app.received;
    expect(got.url).toBe('/hooks/a?b=1');
    expect(got.body.equals(Buffer.from(ENVELOPE))).toBe(true);
    expect(got.headers['x-custom']).toBe('kept');
    expect(got.headers['x-service-signature']).toBe(signature['x-service-signature']);
    expect(got.headers['x-forwarded-for']).toBeDefined();
    expect(got.headers['x-drop']).toBeUndefined(); // listed in Connection: hop-by-hop

    const line = await listen?.waitForLine((l) => l.event === 'delivery');
    expect(line).toMatchObject({
      event: 'delivery',
      eventId: 'evt_direct1',
      type: 'punch.created',
      signature: 'valid',
      status: 201,
    });
    const [capture] = await readSettledCaptures(dir.path);
    expect(capture).toMatchObject({
      source: 'delivery',
      method: 'POST',
      path: '/a?b=1',
      body: ENVELOPE,
      bodyEncoding: 'utf8',
      signature: { status: 'valid', timestamp: expect.any(Number) },
      envelope: { id: 'evt_direct1', type: 'punch.created', api_version: '2026-11-01', created: 1_790_000_000 },
      contractProblems: [],
      duplicateOf: null,
      rejected: null,
      forward: {
        target: `${app.url}/hooks/a?b=1`,
        statusCode: 201,
        body: '{"handled":true}',
        bodySize: 16,
        durationMs: expect.any(Number),
      },
    });
    expect(capture.forward).not.toHaveProperty('bodyTruncated');
    expect(capture.headers['x-custom']).toBe('kept');
  });

  it('puts what the app said into the line of a delivery it refused, and nothing into one it took', async () => {
    const { ready } = await start('--forward-to', app.url);
    await post(ready.listener, ENVELOPE, signed(ENVELOPE));
    expect(await listen?.waitForLine((l) => l.event === 'delivery')).not.toHaveProperty('answer');
    app.setResponder((_request, res) =>
      res.writeHead(422, { 'content-type': 'application/json' }).end('{"message":"unknown employee 1"}'),
    );
    await post(ready.listener, ENVELOPE, signed(ENVELOPE));
    expect(await listen?.waitForLine((l) => l.event === 'delivery' && l.status === 422)).toMatchObject({
      answer: 'unknown employee 1',
    });
  });

  it('suggests once that an app refusing valid signatures may verify with another secret', async () => {
    const { ready } = await start('--forward-to', app.url);
    app.setResponder((_request, res) => res.writeHead(401).end('bad signature'));
    // A forged delivery, which the listener refuses itself, says nothing of the kind.
    await post(ready.listener, ENVELOPE, { 'x-service-signature': 't=1,v1=00' });
    await listen?.waitForLine((l) => l.event === 'delivery' && l.status === 400);
    for (let i = 0; i < 2; i += 1) await post(ready.listener, ENVELOPE, signed(ENVELOPE));
    await listen?.waitForLine((l) => l.event === 'delivery' && l.status === 401 && l.answer === 'bad signature');
    const hint = `The app answered 401 to a delivery whose signature is valid. If it checks signatures, it may verify with another secret than clockhook, which used whsec_…cret (the one given to listen with --secret or $CLOCKHOOK_SECRET).`;
    await expect.poll(() => listen?.stderr.split(hint).length).toBe(2);
    expect(listen?.stderr.split('The app answered').length).toBe(2);
  });

  it("sends a --forward-to's user and password to the app as Basic authorization, and shows the password nowhere", async () => {
    const target = new URL(app.url);
    target.username = 'hook';
    target.password = 's3cr:t';
    const { ready } = await start('--forward-to', `${target.href}hooks`);
    expect(ready.forwardTo).toBe(`${app.url.replace('http://', 'http://hook:***@')}/hooks`);
    expect((await post(ready.listener, ENVELOPE, signed(ENVELOPE))).status).toBe(201);
    expect(app.received.at(-1)?.headers.authorization).toBe(`Basic ${Buffer.from('hook:s3cr:t').toString('base64')}`);
    // A delivery's own Authorization header is the one the app gets.
    expect(
      (await post(ready.listener, ENVELOPE, { ...signed(ENVELOPE), authorization: 'Bearer from-the-sender' })).status,
    ).toBe(201);
    expect(app.received.at(-1)?.headers.authorization).toBe('Bearer from-the-sender');
    const captures = await readSettledCaptures(dir.path);
    expect(captures).toHaveLength(2);
    expect(JSON.stringify(captures)).not.toContain('s3cr');
  });

  it('maps / to the target path itself', async () => {
    const { ready } = await start('--forward-to', `${app.url}/hooks`);
    await post(ready.listener, ENVELOPE, signed(ENVELOPE));
    expect(app.received[0].url).toBe('/hooks');
  });

  it('rejects a tampered body with 400 signature_invalid, captured and not forwarded', async () => {
    const { ready } = await start('--forward-to', app.url);
    const tampered = ENVELOPE.replace('Zoë', 'Zoe');
    const res = await post(ready.listener, tampered, signed(ENVELOPE));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'signature_invalid',
      requestId: expect.any(String),
    });
    expect(app.received).toHaveLength(0);
    await listen?.waitForLine((l) => l.event === 'delivery');
    const [capture] = await readSettledCaptures(dir.path);
    expect(capture).toMatchObject({
      body: tampered,
      signature: { status: 'invalid', reason: 'signature_mismatch' },
      rejected: { statusCode: 400, code: 'signature_invalid' },
    });
  });

  it('rejects a stale timestamp and a missing signature', async () => {
    const { ready } = await start('--forward-to', app.url);
    const stale = await post(ready.listener, ENVELOPE, signed(ENVELOPE, Math.floor(Date.now() / 1000) - 301));
    expect(stale.status).toBe(400);
    expect(JSON.parse(stale.text).error.code).toBe('signature_invalid');
    const missing = await post(ready.listener, ENVELOPE);
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text).error.code).toBe('signature_missing');
    expect(app.received).toHaveLength(0);
    await listen?.waitForLine((l) => l.signature === 'missing');
    const captures = await readCaptures(dir.path);
    expect(captures.map((c) => [c.signature.status, c.signature.reason])).toEqual([
      ['invalid', 'timestamp_outside_tolerance'],
      ['missing', 'missing_header'],
    ]);
    expect(captures[0].signature.ageSeconds).toBeGreaterThanOrEqual(301);
  });

  it('forwards bad signatures with --skip-verify, recording the verdict', async () => {
    const { ready } = await start('--forward-to', app.url, '--skip-verify');
    expect((await post(ready.listener, ENVELOPE)).status).toBe(201);
    await listen?.waitForLine((l) => l.event === 'delivery');
    expect((await readCaptures(dir.path))[0].signature.status).toBe('missing');
  });

  it('answers 200 itself in capture-only mode', async () => {
    const { ready } = await start();
    expect(ready.forwardTo).toBeNull();
    const res = await post(ready.listener, ENVELOPE, signed(ENVELOPE));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ received: true, captureId: expect.stringMatching(/^cap_/) });
    await listen?.waitForLine((l) => l.event === 'delivery');
    expect((await readSettledCaptures(dir.path))[0].forward).toBeNull();
  });

  it('answers 502 forward_failed naming the target when the app is down, and keeps the capture', async () => {
    const down = await startReceiver();
    await down.close();
    // Answered at once, not held for the app (--wait-for-app, tested in wait-for-app.test.ts).
    const { ready } = await start('--forward-to', down.url, '--wait-for-app', '0');
    const res = await post(ready.listener, ENVELOPE, signed(ENVELOPE));
    expect(res.status).toBe(502);
    const error = JSON.parse(res.text).error;
    expect(error.code).toBe('forward_failed');
    expect(error.message).toContain(down.url);
    await listen?.waitForLine((l) => l.event === 'delivery');
    const [capture] = await readSettledCaptures(dir.path);
    expect(capture.forward).toMatchObject({ statusCode: null, error: 'connection refused' });
    expect(listen?.stderr).toContain(`Nothing answers at ${down.url}`);
  });

  it('answers 504 forward_timeout when the app is slower than --timeout', async () => {
    app.setResponder(() => {});
    const { ready } = await start('--forward-to', app.url, '--timeout', '300');
    const res = await post(ready.listener, ENVELOPE, signed(ENVELOPE));
    expect(res.status).toBe(504);
    const error = JSON.parse(res.text).error;
    expect(error.code).toBe('forward_timeout');
    expect(error.message).toMatch(/count.*failed/);
    await listen?.waitForLine((l) => l.event === 'delivery');
    expect((await readSettledCaptures(dir.path))[0].forward).toMatchObject({
      statusCode: null,
      error: 'timed out after 300 ms',
    });
  });

  it('passes a large answer back whole and keeps its first 16 KiB, cut between characters, with its size', async () => {
    // A framework's error page: 'é' is two bytes, the 16,384th and 16,385th.
    const page = Buffer.from(`${'a'.repeat(16 * 1024 - 1)}é${'<p>stack</p>'.repeat(3000)}`);
    app.setResponder((_r, res) => {
      res.writeHead(500, { 'content-type': 'text/html; charset=utf-8' });
      res.write(page.subarray(0, 1000)); // in pieces, as a streamed page comes
      res.end(page.subarray(1000));
    });
    const { ready } = await start('--forward-to', app.url);
    const res = await post(ready.listener, ENVELOPE, signed(ENVELOPE));
    expect(res.status).toBe(500);
    expect(Buffer.from(res.text).equals(page)).toBe(true);
    await listen?.waitForLine((l) => l.event === 'delivery');
    const [capture] = await readSettledCaptures(dir.path);
    expect(capture.forward).toMatchObject({
      statusCode: 500,
      bodyEncoding: 'utf8',
      bodySize: page.length,
      bodyTruncated: true,
    });
    expect(capture.forward?.body).toBe('a'.repeat(16 * 1024 - 1));
  });

  it('stores a non-UTF-8 body as base64 and forwards the exact bytes', async () => {
    const { ready } = await start('--forward-to', app.url);
    const bytes = Buffer.concat([
      Buffer.from('{"id":"evt_bin","x":"'),
      Buffer.from([0xff, 0xfe, 0x80]),
      Buffer.from('"}'),
    ]);
    expect((await post(ready.listener, bytes, signed(bytes))).status).toBe(201);
    expect(app.received[0].body.equals(bytes)).toBe(true);
    await listen?.waitForLine((l) => l.event === 'delivery');
    const [capture] = await readSettledCaptures(dir.path);
    expect(capture.bodyEncoding).toBe('base64');
    expect(Buffer.from(capture.body, 'base64').equals(bytes)).toBe(true);
  });

  it('keeps a leading byte order mark: the capture holds the bytes the signature was made over', async () => {
    const { ready } = await start('--forward-to', app.url);
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(ENVELOPE)]);
    expect((await post(ready.listener, bytes, signed(bytes))).status).toBe(201);
    await listen?.waitForLine((l) => l.event === 'delivery');
    const [capture] = await readSettledCaptures(dir.path);
    expect(Buffer.from(capture.body, capture.bodyEncoding === 'base64' ? 'base64' : 'utf8').equals(bytes)).toBe(true);
  });

  it('forwards and stores a large body byte for byte, with a declared length and chunked alike', async () => {
    const { ready } = await start('--forward-to', app.url);
    const bytes = randomBytes(3 * 1024 * 1024); // many reads, and not UTF-8
    expect((await post(ready.listener, bytes, signed(bytes))).status).toBe(201);
    // Chunked: no Content-Length, the body in several writes.
    const chunked = randomBytes(300 * 1024);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        ready.listener,
        { method: 'POST', headers: { 'content-type': 'application/json', ...signed(chunked) } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      for (let at = 0; at < chunked.length; at += 64 * 1024) req.write(chunked.subarray(at, at + 64 * 1024));
      req.end();
    });
    expect(status).toBe(201);
    // Read whole before forwarding, both reach the app with their length.
    expect(app.received.map((r) => r.headers['content-length'])).toEqual([
      String(bytes.length),
      String(chunked.length),
    ]);
    expect(app.received[0].body.equals(bytes)).toBe(true);
    expect(app.received[1].body.equals(chunked)).toBe(true);
    const captures = await readSettledCaptures(dir.path);
    const stored = await Promise.all(captures.map((c) => readFile(join(dir.path, '.clockhook', c.bodyFile as string))));
    expect(stored[0].equals(bytes)).toBe(true);
    expect(stored[1].equals(chunked)).toBe(true);
  });

  it('answers 413 to a 6 MiB body, capturing its first 5 MiB', async () => {
    const { ready } = await start('--forward-to', app.url);
    const big = Buffer.alloc(6 * 1024 * 1024, 'a');
    const res = await post(ready.listener, big, signed(big));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text).error.code).toBe('payload_too_large');
    expect(app.received).toHaveLength(0);
    await listen?.waitForLine((l) => l.event === 'delivery');
    const [capture] = await readSettledCaptures(dir.path);
    expect(capture).toMatchObject({
      bodySize: 6 * 1024 * 1024,
      bodyTruncated: true,
      rejected: { statusCode: 413, code: 'payload_too_large' },
    });
    // The body is kept apart, in a 0600 file of its own; the capture holds its beginning.
    expect(capture.bodyFile).toBe(`captures.json.bodies/${capture.id}`);
    expect(capture.body).toBe('a'.repeat(16 * 1024));
    const file = join(dir.path, '.clockhook', capture.bodyFile as string);
    expect((await readFile(file)).equals(big.subarray(0, 5 * 1024 * 1024))).toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('answers 503 listener_busy past --max-buffer, with a delivery line that names no capture', async () => {
    const waiting: (() => void)[] = [];
    app.setResponder((_r, res) => waiting.push(() => res.writeHead(200).end('{"ok":true}')));
    const { ready } = await start('--forward-to', app.url, '--max-buffer', '5mb');
    const big = Buffer.alloc(4 * 1024 * 1024, 'a');
    const first = post(ready.listener, big, signed(big));
    await app.waitFor(1);
    const next = Buffer.alloc(2 * 1024 * 1024, 'b');
    const refused = await post(ready.listener, next, signed(next));
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.text).error.code).toBe('listener_busy');
    expect(await listen?.waitForLine((l) => l.event === 'delivery')).toMatchObject({
      captureId: null,
      status: 503,
      error: 'listener_busy',
    });
    expect(listen?.stderr).toContain('Raise --max-buffer');
    waiting.splice(0).forEach((answer) => answer());
    expect((await first).status).toBe(200);
    expect((await readSettledCaptures(dir.path)).map((c) => c.bodySize)).toEqual([4 * 1024 * 1024]);
  });

  it('flags a second delivery of the same event id as a duplicate', async () => {
    const { ready } = await start('--forward-to', app.url);
    await post(ready.listener, ENVELOPE, signed(ENVELOPE));
    await post(ready.listener, ENVELOPE, signed(ENVELOPE));
    await listen?.waitForLine(
      (l) => l.event === 'delivery' && listen?.lines.filter((x) => x.event === 'delivery').length === 2,
    );
    const [first, second] = await readCaptures(dir.path);
    expect(first.duplicateOf).toBeNull();
    expect(second.duplicateOf).toBe(first.id);
    // Said where the developer watches: the NDJSON names the first capture, and only for the second.
    const lines = listen?.lines.filter((l) => l.event === 'delivery') ?? [];
    expect(lines.map((l) => l.duplicateOf)).toEqual([undefined, first.id]);
  });

  it('records contract problems of a body that breaks the envelope', async () => {
    const { ready } = await start();
    const body = envelopeBody('wrong', { created: Date.now() });
    await post(ready.listener, body, signed(body));
    await listen?.waitForLine((l) => l.event === 'delivery');
    const [capture] = await readSettledCaptures(dir.path);
    expect(capture.contractProblems.map((p) => p.field)).toEqual(['id', 'created']);
  });

  it('reports no type, not an empty one, for a body with an event id and no type', async () => {
    const { ready } = await start();
    const body = '{"id":"evt_untyped","api_version":20261101,"created":"yesterday"}';
    await post(ready.listener, body, signed(body));
    expect(await listen?.waitForLine((l) => l.event === 'delivery')).toMatchObject({
      eventId: 'evt_untyped',
      type: null,
    });
    // The capture's envelope keeps what the body says, and null for what it lacks or gets wrong.
    const [capture] = await readSettledCaptures(dir.path);
    expect(capture.envelope).toEqual({ id: 'evt_untyped', type: null, api_version: null, created: null });
  });

  it('answers 404 outside --path without capturing', async () => {
    const { ready } = await start('--forward-to', app.url, '--path', '/webhooks');
    expect(ready.listener).toMatch(/\/webhooks$/);
    const base = ready.listener.replace(/\/webhooks$/, '');
    expect((await post(`${base}/other`, ENVELOPE, signed(ENVELOPE))).status).toBe(404);
    expect((await post(`${base}/webhooks/x`, ENVELOPE, signed(ENVELOPE))).status).toBe(201);
    expect(app.received[0].url).toBe('/x');
  });

  it('keeps history across a restart, in a 0600 file', async () => {
    const first = await start();
    await post(first.ready.listener, ENVELOPE, signed(ENVELOPE));
    await first.waitForLine((l) => l.event === 'delivery');
    expect(await first.stop('SIGTERM')).toBe(0);
    const { stat } = await import('node:fs/promises');
    const file = join(dir.path, '.clockhook', 'captures.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8')).captures).toHaveLength(1);
    const second = await start();
    await post(second.ready.listener, ENVELOPE, signed(ENVELOPE));
    await second.waitForLine((l) => l.event === 'delivery');
    const captures = await readCaptures(dir.path);
    expect(captures).toHaveLength(2);
    expect(captures[1].duplicateOf).toBe(captures[0].id);
  });

  it('moves a corrupt store aside, warning with both paths', async () => {
    const { mkdir, writeFile, readdir } = await import('node:fs/promises');
    await mkdir(join(dir.path, '.clockhook'), { recursive: true });
    await writeFile(join(dir.path, '.clockhook', 'captures.json'), '{"version":1,"captures":[{"id":');
    const { stderr } = await start();
    const aside = (await readdir(join(dir.path, '.clockhook'))).find((f) => f.startsWith('captures.json.corrupt-'));
    expect(aside).toBeDefined();
    expect(stderr).toContain(join('.clockhook', 'captures.json'));
    expect(stderr).toContain(aside);
    expect(await readFile(join(dir.path, '.clockhook', aside as string), 'utf8')).toBe(
      '{"version":1,"captures":[{"id":',
    );
  });

  it('refuses to forward to itself, which would send every delivery around in a loop (exit 2)', async () => {
    const port = String(await portForRestarts());
    for (const target of [port, `http://127.0.0.1:${port}/hooks`]) {
      const res = await runCli(
        ['listen', '--secret', SECRET, '--port', port, '--inspector-port', '0', '--no-open', '--forward-to', target],
        { cwd: dir.path },
      );
      expect(res.code, target).toBe(2);
      const href = new URL(target === port ? `http://localhost:${port}` : target).href;
      expect(res.stderr).toBe(
        `clockhook: --forward-to ${href} is this listener itself (port ${port}): every delivery would come back to it. Give your app's port, such as --forward-to 3000, or move the listener with --port.\n`,
      );
    }
  });

  it('refuses to forward to its own inspector page, which is not the app (exit 2)', async () => {
    const port = String(await portForRestarts());
    const res = await runCli(
      ['listen', '--secret', SECRET, '--port', '0', '--inspector-port', port, '--no-open', '--forward-to', port],
      { cwd: dir.path },
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(
      `clockhook: --forward-to http://localhost:${port}/ is this listen's inspector page (port ${port}), not your app: it would answer every delivery 404. Give your app's port, such as --forward-to 3000, or move the inspector with --inspector-port.\n`,
    );
  });

  it('refuses a second listener on the same store with a clear message', async () => {
    await start();
    const { runCli } = await import('../helpers/cli.js');
    const second = await runCli(['listen', '--port', '0', '--secret', SECRET, '--json'], { cwd: dir.path });
    expect(second.code).toBe(1);
    // With what to do when the pid on the lock is not a listen any more (a crash, then the pid reused).
    expect(second.stderr).toMatch(
      /^clockhook: \.clockhook\/captures\.json is in use by another clockhook listen \(pid (\d+)\)\. Stop that one, or give this one its own store with --db\. \(If no listen runs, pid \1 is another program's now: delete \.clockhook\/captures\.json\.lock\.\)\n$/,
    );
  });

  it('keeps the retention cap', async () => {
    const { ready } = await start('--max-captures', '3');
    for (let i = 0; i < 5; i++) {
      const body = ENVELOPE.replace('evt_direct1', `evt_${i}`);
      await post(ready.listener, body, signed(body));
    }
    await listen?.waitForLine(() => (listen?.lines.filter((x) => x.event === 'delivery').length ?? 0) === 5);
    await listen?.stop('SIGTERM');
    const captures = await readCaptures(dir.path);
    expect(captures.map((c) => c.envelope?.id)).toEqual(['evt_2', 'evt_3', 'evt_4']);
  });
});
