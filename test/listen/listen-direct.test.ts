// listen with a known secret: the forward and the app's answer, and the store it keeps.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startReceiver } from '../helpers/receiver.js';
import { post, readCaptures, readSettledCaptures } from '../helpers/listen.js';
import { runCli } from '../helpers/cli.js';
import { portForRestarts } from '../helpers/ports.js';
import { app, dir, ENVELOPE, listen, SECRET, signed, start, useDirectListen } from './direct-rig.js';

useDirectListen();

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
