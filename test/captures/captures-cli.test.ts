import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, signedFixture } from '../../src/captures/index.js';
import { signPayload, verifySignature } from '../../src/contract/index.js';
import type { ListenSession } from '../../src/listen/index.js';
import type { Capture } from '../../src/store/index.js';
import { runCli } from '../helpers/cli.js';
import { connectClient, startInspectedSession } from '../helpers/inspector.js';
import { post, postSigned, readCaptures } from '../helpers/listen.js';
import { type FixableApp, startReceiver } from '../helpers/receiver.js';
import { envelopeBody } from '../helpers/delivery.js';

// One listen (embedded sandbox, inspector) and one app for the file; the commands run in its folder.
let t: Awaited<ReturnType<typeof startInspectedSession>>;
let app: FixableApp;
let session: ListenSession;
let secret: string;
const cli = (...args: string[]) => runCli(args, { cwd: t.dir });
const envelope = (id: string, extra: Record<string, unknown> = {}) => envelopeBody(id, { data: { id: 1, ...extra } });

const UTF8 = envelope('evt_utf8', { note: 'Zoë → café' });
const BYTES = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x80, 0x7d]); // not UTF-8: stored as base64
const LARGE = envelope('evt_large', { pad: 'x'.repeat(40 * 1024) }); // over 16 KiB: kept in a body file
const ids: Record<string, string> = {};

/** Runs an exported script with bash, with `env` added; its exit code and output. */
function bash(script: string, env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'bash',
      [script],
      { env: { PATH: process.env.PATH, ...env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

async function capturesNow(): Promise<Capture[]> {
  return JSON.parse(
    `[${(await cli('captures', 'list', '--limit', '1000', '--json')).stdout.trim().split('\n').join(',')}]`,
  );
}

beforeAll(async () => {
  t = await startInspectedSession();
  ({ app, session } = t);
  secret = session.secret as string;
  for (const [name, body] of [
    ['utf8', UTF8],
    ['bytes', BYTES],
    ['large', LARGE],
  ] as const) {
    const res = await postSigned(session.ready.listener, body, secret, { 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    ids[name] = session.store.newest(1)[0].id;
  }
}, 30_000);

afterAll(async () => {
  await t?.close();
});

describe('captures list and show', () => {
  it('list the store while listen runs, newest first, one line each for people', async () => {
    const listed = await capturesNow();
    expect(listed.slice(0, 3).map((c) => c.id)).toEqual([ids.large, ids.bytes, ids.utf8]);
    const lines = (await cli('captures', 'list')).stdout.trim().split('\n');
    expect(lines[2]).toMatch(
      new RegExp(
        `--> punch\\.created \\[evt_utf8\\] signature valid  <-- \\[200\\] POST http://127\\.0\\.0\\.1:\\d+/ \\(\\d+ ms\\)  ${ids.utf8}$`,
      ),
    );
    // A mistyped --db reads as empty: the list says there is no store there.
    expect((await cli('captures', 'list', '--db', 'captres.json')).stdout).toBe(
      'No captures: there is no store at captres.json (clockhook listen --db captres.json makes one).\n',
    );
  });

  it('show a capture whole: pretty JSON, the body file read in full, the verdict and the answer', async () => {
    const shown = (await cli('captures', 'show', ids.utf8)).stdout;
    expect(shown).toContain('"note": "Zoë → café"');
    expect(shown).toContain('Signature: valid');
    expect(shown).toMatch(/Answer: http:\/\/127\.0\.0\.1:\d+\/ answered 200/);
    // --json: `body` is the whole body, UTF-8 as text and other bytes as base64, with no second field.
    const large = JSON.parse((await cli('captures', 'show', ids.large, '--json')).stdout);
    expect(large).toMatchObject({ body: LARGE, bodyEncoding: 'utf8', bodySize: Buffer.byteLength(LARGE) });
    expect(large).not.toHaveProperty('bodyFile');
    expect(large).not.toHaveProperty('wholeBody');
    const bytes = JSON.parse((await cli('captures', 'show', ids.bytes, '--json')).stdout);
    expect(bytes.bodyEncoding).toBe('base64');
    expect(Buffer.from(bytes.body, 'base64').equals(BYTES)).toBe(true);
  });

  it('refuse what is given wrong with exit 2 and what to give instead', async () => {
    const cases: [string[], RegExp][] = [
      [['captures', 'show', 'cap_0000000000nothere'], /no capture cap_0000000000nothere .*npx clockhook captures list/],
      [['captures', 'show', 'evt_utf8'], /is not a capture id/],
      [['captures', 'list', '--status', 'broken'], /--status broken: give 2xx, failed, rejected/],
      [['captures', 'list', '--since', 'yesterday'], /--since yesterday: give 30s, 10m/],
      [['captures', 'list', '--type', 'punch.creatd'], /did you mean punch\.created\?/],
      [['captures', 'list', '--limit', '0'], /--limit/],
      [['replay'], /say what to replay/],
      [['replay', '--failed', '--to', 'ftp://x'], /--to "ftp:\/\/x" uses ftp:, but .* try 3000/],
    ];
    for (const [args, message] of cases) {
      const res = await cli(...args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr, args.join(' ')).toMatch(message);
    }
  }, 60_000);
});

describe('captures export', () => {
  it('HAR 1.2: every required field, and postData holding the exact bytes of each body', async () => {
    const res = await cli('captures', 'export', ids.utf8, ids.bytes, ids.large, '--format', 'har');
    const har = JSON.parse(res.stdout);
    expect(har.log).toMatchObject({ version: '1.2', creator: { name: 'clockhook' } });
    expect(har.log.entries).toHaveLength(3);
    const expected = [Buffer.from(UTF8), BYTES, Buffer.from(LARGE)];
    for (const [i, entry] of har.log.entries.entries()) {
      expect(Object.keys(entry)).toEqual(
        expect.arrayContaining(['startedDateTime', 'time', 'request', 'response', 'cache', 'timings']),
      );
      expect(Number.isNaN(Date.parse(entry.startedDateTime))).toBe(false);
      for (const field of [
        'method',
        'url',
        'httpVersion',
        'cookies',
        'headers',
        'queryString',
        'headersSize',
        'bodySize',
      ])
        expect(entry.request, field).toHaveProperty(field);
      for (const field of [
        'status',
        'statusText',
        'httpVersion',
        'cookies',
        'headers',
        'content',
        'redirectURL',
        'headersSize',
        'bodySize',
      ])
        expect(entry.response, field).toHaveProperty(field);
      expect(entry.response.content).toHaveProperty('size');
      expect(entry.response.content).toHaveProperty('mimeType');
      for (const field of ['send', 'wait', 'receive']) expect(typeof entry.timings[field]).toBe('number');
      const { text, encoding } = entry.request.postData;
      expect(Buffer.from(text, encoding === 'base64' ? 'base64' : 'utf8').equals(expected[i])).toBe(true);
      expect(entry._clockhook).toMatchObject({
        captureId: [ids.utf8, ids.bytes, ids.large][i],
        signature: { status: 'valid' },
      });
    }
    expect(har.log.entries[1].request.postData.encoding).toBe('base64');
    expect(res.stdout).not.toContain(secret);
  });

  it('curl: a bash script that sends the same bytes and headers again, re-signed when it runs', async () => {
    const target = await startReceiver();
    try {
      const out = join(t.dir, 'replay.sh');
      const res = await cli(
        'captures',
        'export',
        ids.utf8,
        ids.bytes,
        ids.large,
        '--format',
        'curl',
        '--to',
        `${target.url}/`,
        '-o',
        out,
      );
      expect(res.code).toBe(0);
      expect(res.stderr).toBe(`Wrote 3 captures to ${out}.\n`);
      expect(await readFile(out, 'utf8')).not.toContain(secret);
      // Without the secret, it says where to get it and sends nothing.
      const unsigned = await bash(out);
      expect(unsigned.code).toBe(2);
      expect(unsigned.stderr).toContain('export WEBHOOK_SECRET="$(npx clockhook secret)"');
      const sent = await bash(out, { WEBHOOK_SECRET: secret });
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout).toContain(`${ids.utf8} punch.created evt_utf8: 200`);
      expect(target.received.map((r) => r.body)).toEqual([Buffer.from(UTF8), BYTES, Buffer.from(LARGE)]);
      // Signed now, with the endpoint's secret: valid within the 5-minute replay window.
      for (const request of target.received)
        expect(
          verifySignature({ header: request.headers['x-service-signature'], payload: request.body, secret }),
        ).toMatchObject({ ok: true });
      // --as-is: the header each arrived with, which still verifies over the bytes.
      const one = await cli(
        'captures',
        'export',
        ids.utf8,
        '--format',
        'curl',
        '--as-is',
        '--to',
        `${target.url}/`,
        '-o',
        out,
      );
      expect(one.stderr).toBe(`Wrote 1 capture to ${out}.\n`);
      expect((await bash(out)).code).toBe(0);
      const asIs = target.received[3];
      const original = session.store.get(ids.utf8)?.headers['x-service-signature'];
      expect(asIs.headers['x-service-signature']).toBe(original);
    } finally {
      await target.close();
    }
  });

  it('curl: a capture signed ten minutes ago goes through listen valid; the script stops at a 500, naming it', async () => {
    // Captured, and refused: its signature was made ten minutes before it arrived.
    const old = envelope('evt_old', { late: true });
    const header = signPayload({ payload: old, secret, timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect((await post(session.ready.listener, old, { 'x-service-signature': header })).status).toBe(400);
    const oldId = session.store.newest(1)[0].id;
    const out = join(t.dir, 'old.sh');
    const exported = await cli(
      'captures',
      'export',
      oldId,
      ids.utf8,
      '--format',
      'curl',
      '--to',
      session.ready.listener,
      '-o',
      out,
    );
    expect(exported.stderr).toBe(`Wrote 2 captures to ${out}.\n`);
    const sent = await bash(out, { WEBHOOK_SECRET: secret });
    expect(sent.code, sent.stderr).toBe(0);
    const [again] = session.store.newest(2).filter((c) => c.envelope?.id === 'evt_old');
    expect(again.signature.status).toBe('valid');
    try {
      app.failing = true;
      const stopped = await bash(out, { WEBHOOK_SECRET: secret });
      expect(stopped.code).toBe(1);
      expect(stopped.stderr).toContain(`${oldId} punch.created evt_old: answered 500, not a 2xx; stopping here.`);
      expect(stopped.stderr).toContain('handler broken');
      // Stopped at the first: the second was not sent.
      expect(stopped.stdout).not.toContain(ids.utf8);
    } finally {
      app.failing = false;
    }
    // Fixed, the script goes through again: the event is delivered (and out of the failed set).
    expect((await bash(out, { WEBHOOK_SECRET: secret })).code).toBe(0);
  });

  it('fixtures: one file per capture without the signature; re-signed and sent, the listener finds it valid', async () => {
    const out = join(t.dir, 'fixtures');
    expect((await cli('captures', 'export', ids.utf8, ids.large, '--format', 'fixture', '-o', out)).code).toBe(0);
    expect((await readdir(out)).sort()).toEqual([`${ids.large}.json`, `${ids.utf8}.json`].sort());
    const fixture = JSON.parse(await readFile(join(out, `${ids.large}.json`), 'utf8')) as Fixture;
    expect(fixture).toMatchObject({
      clockhookFixture: 1,
      method: 'POST',
      path: '/',
      bodyEncoding: 'utf8',
      envelope: { id: 'evt_large' },
    });
    expect(fixture.headers).not.toHaveProperty('x-service-signature');
    expect(fixture.body).toBe(LARGE);
    const request = signedFixture(fixture, { secret });
    const res = await post(session.ready.listener, request.body, request.headers as Record<string, string>);
    expect(res.status).toBe(200);
    expect(session.store.newest(1)[0]).toMatchObject({ envelope: { id: 'evt_large' }, signature: { status: 'valid' } });
  });

  it('ndjson: one capture per line, as stored, each with its whole body', async () => {
    const lines = (await cli('captures', 'export', ids.utf8, ids.bytes, ids.large, '--format', 'ndjson')).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.id)).toEqual([ids.utf8, ids.bytes, ids.large]);
    const bodies = lines.map((line) => Buffer.from(line.body, line.bodyEncoding === 'base64' ? 'base64' : 'utf8'));
    expect(bodies.map((body) => body.toString('hex'))).toEqual(
      [UTF8, BYTES, LARGE].map((body) => Buffer.from(body).toString('hex')),
    );
    expect(lines.map((line) => line.story.kind)).toEqual(['first', 'first', 'first']);
  });
});

describe('replay and trigger --set', () => {
  it('replay --failed after the handler is fixed goes through listen, exits 0, and the page shows the replays', async () => {
    const page = await connectClient(
      `ws://${new URL(session.ready.inspector as string).host}/ws?token=${new URL(session.ready.inspector as string).searchParams.get('token')}`,
    );
    try {
      app.failing = true;
      const first = JSON.parse((await cli('trigger', 'employee.created', '--json')).stdout);
      const second = JSON.parse((await cli('trigger', 'employee.updated', '--json')).stdout);
      const mine = (c: Capture) => c.envelope?.id === first.id || c.envelope?.id === second.id;
      await expect
        .poll(async () => (await capturesNow()).filter((c) => mine(c) && c.forward?.statusCode === 500).length)
        .toBe(2);
      const failed = await cli('replay', '--failed');
      expect(failed.code).toBe(1); // still broken
      app.failing = false;
      const fixed = await cli('replay', '--failed', '--json');
      expect(fixed.code, fixed.stderr).toBe(0);
      const lines = fixed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((l) => [l.via, l.status])).toEqual([
        ['listen', 200],
        ['listen', 200],
      ]);
      const replays = (await capturesNow()).filter(
        (c) => c.source === 'replay' && lines.some((l) => l.replayId === c.id),
      );
      expect(replays.map((c) => c.envelope?.id).sort()).toEqual([first.id, second.id].sort());
      await page.waitFor(
        (m) => m.type === 'capture' && m.capture.id === lines[1].replayId && m.capture.source === 'replay',
      );
      // Nothing failed is left: a second run has nothing to do.
      expect((await cli('replay', '--failed')).stderr).toContain('Nothing to replay: no event failed');
    } finally {
      app.failing = false;
      page.close();
    }
  }, 60_000);

  it("returns a replay's result only once its record is on the disk: another reader finds it answered", async () => {
    // Read the way `captures` and the MCP tools read (the file, not listen's memory), at once after each result.
    for (let i = 0; i < 3; i++) {
      const result = await session.listener.replay({ captureId: ids.utf8, mode: 'resign' });
      const onDisk = (await readCaptures(t.dir)).find((c) => c.id === result.captureId);
      expect(onDisk?.forward?.statusCode, 'the replay is still pending on the disk').toBe(200);
      expect(result).toMatchObject({ statusCode: 200, story: { outcome: '2xx', status: '200' } });
    }
  });

  it('replay --to sends straight to the app, re-signed with the secret, and stores nothing', async () => {
    const before = session.store.all().length;
    const target = await startReceiver();
    try {
      const res = await cli('replay', ids.utf8, '--to', `${target.url}/direct`, '--secret', secret, '--json');
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ via: 'direct', status: 200, replayId: null });
      const [request] = target.received;
      expect(request.url).toBe('/direct');
      expect(request.body.toString()).toBe(UTF8);
      expect(
        verifySignature({ header: request.headers['x-service-signature'], payload: request.body, secret }).ok,
      ).toBe(true);
      expect(session.store.all()).toHaveLength(before);
      // --to takes what --forward-to takes: a port and a path are the app on localhost.
      const port = new URL(target.url).port;
      const short = await cli('replay', ids.utf8, '--to', `${port}/short`, '--secret', secret);
      expect(short.code, short.stderr).toBe(0);
      expect(target.received.map((r) => r.url)).toEqual(['/direct', '/short']);
    } finally {
      await target.close();
    }
  });

  it('trigger --set and --unset change the data that reaches the app', async () => {
    const event = JSON.parse(
      (
        await cli(
          'trigger',
          'punch.created',
          '--set',
          'note=late again',
          '--set',
          'employeeId=7',
          '--set',
          'tags[0]=night',
          '--unset',
          'locationId',
          '--json',
        )
      ).stdout,
    );
    await expect.poll(() => app.received.some((r) => r.body.includes(event.id))).toBe(true);
    const data = JSON.parse(app.received.find((r) => r.body.includes(event.id))!.body.toString()).data;
    expect(data).toMatchObject({ note: 'late again', employeeId: 7, tags: ['night'] });
    expect(data).not.toHaveProperty('locationId');
    const missing = await cli('trigger', 'punch.created', '--unset', 'nothing.here');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--unset nothing.here: the data has nothing at nothing.here');
  });
});
