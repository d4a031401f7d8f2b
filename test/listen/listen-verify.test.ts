// listen with a known secret: signatures checked, and bodies of every kind captured and forwarded exactly.
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { post, readCaptures, readSettledCaptures } from '../helpers/listen.js';
import { envelopeBody } from '../helpers/delivery.js';
import { app, dir, ENVELOPE, listen, signed, start, useDirectListen } from './direct-rig.js';

useDirectListen();

describe('listen with a known secret: signatures and bodies', () => {
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
});
