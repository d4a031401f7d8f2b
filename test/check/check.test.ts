import { fork } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type CheckReport, runChecks } from '../../src/check/index.js';
import { verifySignature } from '../../src/contract/index.js';
import { runCli } from '../helpers/cli.js';
import { startListenProcess } from '../helpers/listen.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';

const SECRET = 'whsec_check_fixture_secret';
const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** Starts a receiver fixture as its own process; resolves with its URL. */
function startFixture(name: string, secret = SECRET): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url)), [], {
      env: { ...process.env, WEBHOOK_SECRET: secret, PORT: '0' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    stops.push(() => child.kill());
    child.once('message', (message: { port: number }) => resolve(`http://127.0.0.1:${message.port}`));
    child.once('exit', (code) => reject(new Error(`${name} exited ${code}`)));
  });
}

async function check(...args: string[]) {
  const dir = await tempDir();
  stops.push(dir.remove);
  const result = await runCli(['check', '--secret', SECRET, '--json', ...args], { cwd: dir.path });
  return { ...result, report: (result.stdout ? JSON.parse(result.stdout) : null) as CheckReport };
}

const statusOf = (report: CheckReport) => Object.fromEntries(report.checks.map((c) => [c.id, c.status]));

describe('clockhook check', () => {
  it('passes every check of the minimal correct receiver (the README example), exit 0', async () => {
    const url = await startFixture('correct-receiver.mjs');
    const { code, report } = await check('--forward-to', url, '--dedupe-probe', `${url}/dedupe`);
    expect(report.checks.filter((c) => c.status !== 'pass')).toEqual([]);
    expect(report).toMatchObject({ target: `${url}/`, ok: true });
    expect(Object.keys(statusOf(report))).toEqual([
      'valid:punch.created',
      'valid:employee.updated',
      'valid:time_card.approved',
      'valid:pto_request.approved',
      'valid:shift.published',
      'raw-body',
      'wrong-secret',
      'tampered-body',
      'missing-header',
      'malformed-no-t',
      'malformed-bad-t',
      'stale-timestamp',
      'duplicate',
      'envelope',
      'ping',
      'response-time',
    ]);
    expect(code).toBe(0);
  });

  it('catches the naive receiver: re-serialized JSON fails, no timestamp check warns, exit 1', async () => {
    const url = await startFixture('naive-receiver.mjs');
    const { code, report } = await check('--forward-to', url);
    const status = statusOf(report);
    expect(status['raw-body']).toBe('fail');
    expect(status['stale-timestamp']).toBe('warn');
    expect(status.duplicate).toBe('warn');
    expect(status['valid:punch.created']).toBe('pass');
    expect(status['wrong-secret']).toBe('pass');
    expect(report.checks.find((c) => c.id === 'raw-body')?.hint).toMatch(/raw/);
    expect(report.ok).toBe(false);
    expect(code).toBe(1);
  });

  it('says once that an app refusing every signed delivery most likely has another secret, instead of nine unrelated fixes', async () => {
    const url = await startFixture('correct-receiver.mjs', 'whsec_the_apps_own_secret');
    const { code, report } = await check('--forward-to', url);
    expect(code).toBe(1);
    const failed = report.checks.filter((c) => c.status === 'fail');
    expect(failed.map((c) => c.id)).toEqual([
      'valid:punch.created',
      'valid:employee.updated',
      'valid:time_card.approved',
      'valid:pto_request.approved',
      'valid:shift.published',
      'raw-body',
      'duplicate',
      'envelope',
      'ping',
    ]);
    const hints = new Set(failed.map((c) => c.hint));
    expect([...hints]).toEqual([
      `The app refused every correctly signed delivery (400): it most likely verifies with another secret than whsec_…cret, the one check signed with. Give check your app's secret (--secret), or give your app this one ("npx clockhook secret" prints the one clockhook listen registered in this folder).`,
    ]);
    // The forged deliveries it refuses as it should.
    expect(statusOf(report)['wrong-secret']).toBe('pass');
    const dir = await tempDir();
    stops.push(dir.remove);
    const table = await runCli(['check', '--forward-to', url, '--secret', SECRET], { cwd: dir.path });
    expect(table.stdout.match(/most likely verifies with another secret/g)).toHaveLength(1);
    expect(table.stdout).toContain(
      'FAIL valid:punch.created, valid:employee.updated, valid:time_card.approved, valid:pto_request.approved, valid:shift.published, raw-body, duplicate, envelope, ping: The app refused',
    );
  });

  it("keeps each check's own advice when the app takes some signed deliveries", async () => {
    const app = await startReceiver((request, res) => {
      const type = (JSON.parse(request.body.toString()) as { type: string }).type;
      res
        .writeHead(
          type === 'punch.created' &&
            verifySignature({
              header: String(request.headers['x-service-signature']),
              payload: request.body,
              secret: SECRET,
            }).ok
            ? 200
            : 401,
        )
        .end();
    });
    stops.push(() => app.close());
    const { report } = await check('--forward-to', app.url, '--events', 'punch.created,shift.published');
    expect(report.checks.find((c) => c.id === 'valid:shift.published')?.hint).toMatch(
      /^Answer 2xx to every delivery whose signature verifies/,
    );
  });

  it('prints a table with hints for people', async () => {
    const url = await startFixture('naive-receiver.mjs');
    const dir = await tempDir();
    stops.push(dir.remove);
    const { stdout, code } = await runCli(['check', '--forward-to', url, '--secret', SECRET], { cwd: dir.path });
    expect(code).toBe(1);
    expect(stdout).toMatch(/FAIL\s+signature is checked over the raw bytes/);
    expect(stdout).toContain('How to fix:');
    expect(stdout).toMatch(/\d+ passed, 1 failed, 2 warned/);
  });

  it("sends a target's user and password as Basic authorization, and prints the password nowhere", async () => {
    const app = await startReceiver();
    stops.push(app.close);
    const { stdout, report } = await check('--forward-to', app.url.replace('http://', 'http://hook:s3cret@'));
    expect(report.target).toBe(`${app.url.replace('http://', 'http://hook:***@')}/`);
    expect(stdout).not.toContain('s3cret');
    expect(app.received.map((r) => r.headers.authorization)).toContain(
      `Basic ${Buffer.from('hook:s3cret').toString('base64')}`,
    );
    expect(app.received.map((r) => r.body.toString()).join('')).not.toContain('s3cret');
  });

  it('names an unreachable target, exit 1', async () => {
    const gone = await startReceiver();
    await gone.close();
    const dir = await tempDir();
    stops.push(dir.remove);
    const res = await runCli(['check', '--forward-to', gone.url, '--secret', SECRET], { cwd: dir.path });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`nothing answers at ${gone.url}/`);
    // With --json, a CI job reading stdout gets the verdict too.
    const json = await runCli(['check', '--forward-to', gone.url, '--secret', SECRET, '--json'], { cwd: dir.path });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      target: `${gone.url}/`,
      ok: false,
      error: expect.stringContaining('nothing answers at'),
      checks: [],
    });
  });

  it('refuses missing --secret and bad --events with exit 2', async () => {
    const dir = await tempDir();
    stops.push(dir.remove);
    const missing = await runCli(['check', '--forward-to', '3000'], { cwd: dir.path });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--secret is required');
    expect(
      (
        await runCli(['check', '--forward-to', '3000', '--secret', SECRET, '--events', 'punch.exploded'], {
          cwd: dir.path,
        })
      ).code,
    ).toBe(2);
    // The probe is read with fetch: a URL it cannot read would only ever give "cannot tell whether it deduplicated".
    const probe = (url: string) =>
      runCli(['check', '--forward-to', '3000', '--secret', SECRET, '--dedupe-probe', url], { cwd: dir.path });
    expect(await probe('ftp://localhost/count')).toMatchObject({
      code: 2,
      stderr:
        'clockhook: --dedupe-probe "ftp://localhost/count" is not an http(s) URL; e.g. http://localhost:3000/processed-count.\n',
    });
    expect(await probe('http://localhost:6000/count')).toMatchObject({
      code: 2,
      stderr:
        'clockhook: --dedupe-probe "http://localhost:6000/count" is on port 6000, which fetch refuses to connect to (the Fetch standard blocks it, with 9, 6667 and others); serve the probe on another port.\n',
    });
  });

  it('without --secret, in the folder where listen runs, uses the secret of the endpoint listen registered', async () => {
    const dir = await tempDir();
    stops.push(dir.remove);
    const listen = await startListenProcess(['--print-secret', '--no-inspector'], dir.path);
    stops.push(() => listen.stop('SIGKILL'));
    const url = await startFixture('correct-receiver.mjs', listen.ready.secret);
    // An empty variable is unset (`export CLOCKHOOK_SECRET=`), not a secret.
    const { code, stdout, stderr } = await runCli(['check', '--forward-to', url, '--json'], {
      cwd: dir.path,
      env: { CLOCKHOOK_SECRET: '' },
    });
    expect(JSON.parse(stdout).checks.filter((c: { status: string }) => c.status === 'fail')).toEqual([]);
    expect(code).toBe(0);
    expect(stderr).toContain(`Using the secret of endpoint ${listen.ready.endpointId} (${listen.ready.listener}`);
  });

  it('without --secret, names the endpoints on file when there are several to choose from', async () => {
    const dir = await tempDir();
    stops.push(dir.remove);
    await mkdir(join(dir.path, '.clockhook'));
    const record = (id: number, secret: string) => ({
      apiBase: 'http://127.0.0.1:4302',
      url: `http://127.0.0.1:${4300 + id}/`,
      id,
      secret,
      createdAt: '2026-11-22T00:00:00.000Z',
    });
    await writeFile(
      join(dir.path, '.clockhook', 'endpoints.json'),
      JSON.stringify([record(1, 'whsec_first_aaaa'), record(2, 'whsec_second_bbbb')]),
    );
    const { code, stderr } = await runCli(['check', '--forward-to', '3000'], { cwd: dir.path });
    expect(code).toBe(2);
    expect(stderr).toContain(
      'endpoint 1 (http://127.0.0.1:4301/, secret whsec_…aaaa), endpoint 2 (http://127.0.0.1:4302/, secret whsec_…bbbb)',
    );
    expect(stderr).not.toContain('whsec_first');
  });

  it("tells an address given as an argument (ngrok's way) to go in --forward-to, for check and listen alike", async () => {
    const dir = await tempDir();
    stops.push(dir.remove);
    const runs = await Promise.all(
      [
        ['check', 'localhost:3000/hooks', '--secret', SECRET],
        ['listen', '3000'],
        ['check', '--secret', SECRET],
        ['check', '--forward-to', '3000', 'extra', '--secret', SECRET],
      ].map((args) => runCli(args, { cwd: dir.path })),
    );
    for (const res of runs) expect(res.code).toBe(2);
    expect(runs.map((res) => res.stderr.trim())).toEqual([
      "clockhook: check takes your app's address as a flag: npx clockhook check --forward-to localhost:3000/hooks",
      "clockhook: listen takes your app's address as a flag: npx clockhook listen --forward-to 3000",
      'clockhook: --forward-to is required: the receiver to check, such as --forward-to 3000/webhooks.',
      'clockhook: check takes no arguments (got "extra"); see npx clockhook check --help.',
    ]);
  });
});

describe('runChecks against misbehaving receivers', () => {
  let app: Receiver;
  afterEach(() => app?.close());

  it('fails an app that accepts everything, and one that crashes with 500 on bad signatures', async () => {
    app = await startReceiver((_r, res) => res.writeHead(200).end());
    const lax = await runChecks({ target: new URL(app.url), secret: SECRET });
    expect(statusOf(lax)).toMatchObject({
      'wrong-secret': 'fail',
      'tampered-body': 'fail',
      'missing-header': 'fail',
      'malformed-no-t': 'fail',
      'stale-timestamp': 'warn',
    });
    app.setResponder((request, res) =>
      res.writeHead(request.headers['x-service-signature']?.toString().includes('t=yesterday') ? 500 : 200).end(),
    );
    const crashing = await runChecks({ target: new URL(app.url), secret: SECRET });
    expect(crashing.checks.find((c) => c.id === 'malformed-bad-t')).toMatchObject({
      status: 'fail',
      hint: expect.stringMatching(/do not crash/),
    });
    // One that dies on every request, without an answer.
    app.setResponder((_r, _res, req) => req.socket.destroy());
    const dying = await runChecks({ target: new URL(app.url), secret: SECRET, events: ['punch.created'] });
    expect(dying.checks.find((c) => c.id === 'valid:punch.created')).toMatchObject({
      status: 'fail',
      got: expect.stringMatching(/^the app closed the connection without answering after \d+ ms$/),
      hint: expect.stringMatching(/^The app closed the connection without answering: it most likely crashed/),
    });
    expect(dying.checks.find((c) => c.id === 'wrong-secret')).toMatchObject({
      status: 'fail',
      hint: expect.stringMatching(/do not crash/),
    });
  });

  it('fails a receiver that redirects, saying why and which URL to use', async () => {
    app = await startReceiver((_r, res) => res.writeHead(308, { location: '/hooks/' }).end());
    const report = await runChecks({ target: new URL(`${app.url}/hooks`), secret: SECRET, events: ['punch.created'] });
    expect(report.checks.find((c) => c.id === 'valid:punch.created')).toMatchObject({
      status: 'fail',
      got: expect.stringMatching(/^308 in \d+ ms, redirecting to \/hooks\/$/),
      hint: `The app redirects to ${app.url}/hooks/, and the service does not follow redirects: it counts every such delivery as failed. Register (and check) the URL the app answers at: --forward-to ${app.url}/hooks/`,
    });
  });

  it('fails duplicate processing reported by the probe, and a slow answer', async () => {
    let processed = 0;
    const app = await startReceiver((request, res) => {
      if (request.url.startsWith('/dedupe')) return res.end(JSON.stringify({ count: processed }));
      if (request.headers['x-service-event'] === 'employee.created') processed += 1;
      if (request.headers['x-service-event'] === 'webhook_endpoint.ping') {
        setTimeout(() => res.writeHead(200).end(), 400);
        return;
      }
      res.writeHead(200).end();
    });
    const report = await runChecks({
      target: new URL(app.url),
      secret: SECRET,
      dedupeProbe: new URL(`${app.url}/dedupe`),
      slowMs: 200,
    });
    expect(report.checks.find((c) => c.id === 'duplicate')).toMatchObject({
      status: 'fail',
      got: expect.stringContaining('processed 2 time(s)'),
    });
    expect(report.checks.find((c) => c.id === 'response-time')).toMatchObject({ status: 'warn' });
    const strict = await runChecks({ target: new URL(app.url), secret: SECRET, timeoutMs: 300 });
    expect(strict.checks.find((c) => c.id === 'response-time')?.status).toBe('fail');
    expect(strict.checks.find((c) => c.id === 'ping')?.status).toBe('fail');
  });
});

describe('the check docs', () => {
  it('show the correct receiver exactly as the fixture CI checks', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile(new URL('../../docs/check.md', import.meta.url), 'utf8');
    const fixture = await readFile(new URL('../fixtures/correct-receiver.mjs', import.meta.url), 'utf8');
    expect(readme).toContain(`\`\`\`js\n${fixture}\`\`\``);
  });
});
