import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiClient } from '../../src/api/index.js';
import type { Scenario } from '../../src/captures/index.js';
import { verifySignature } from '../../src/contract/index.js';
import { parseFaults } from '../../src/listener/index.js';
import { type ListenSession, startListen } from '../../src/listen/index.js';
import { playScenario } from '../../src/testing/index.js';
import { runCli } from '../helpers/cli.js';
import { postSigned } from '../helpers/listen.js';
import { portForRestarts } from '../helpers/ports.js';
import { type ReceivedRequest, type Receiver, startReceiver } from '../helpers/receiver.js';
import { startTestSandbox, type TestSandbox, tempDir } from '../helpers/sandbox.js';

// A session recorded through a real listen and app, as the service delivers (the file's sandbox, retries after
// 0.3 s): a punch.created the app answered 500 and its retry, an employee.created with a duplicate from
// listen --faults, and a body that is not UTF-8. Exported once as a scenario, then played in several ways.
let sandbox: TestSandbox;
let listen: ListenSession;
let app: Receiver;
let dir: Awaited<ReturnType<typeof tempDir>>;
let secret: string;
let file: string;
let scenario: Scenario;
const BYTES = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x80, 0x7d]);
const cli = (...args: string[]) => runCli(args, { cwd: dir.path });
const idOf = (request: ReceivedRequest) => /"id":"(evt_\w+)"/.exec(request.body.toString('latin1'))?.[1];

/** 500 to the first delivery of `failOnce`'s event, 200 to the rest; 400 to a signature that does not hold. */
function answering(failOnce: string | null) {
  let failed = false;
  return (request: ReceivedRequest, res: import('node:http').ServerResponse) => {
    const header = request.headers['x-service-signature'] as string;
    if (!verifySignature({ header, payload: request.body, secret }).ok) return void res.writeHead(400).end();
    const fail = !failed && failOnce !== null && request.body.includes(failOnce);
    failed ||= fail;
    res.writeHead(fail ? 500 : 200).end();
  };
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ timeScale: 0.005 });
  const client = new ApiClient({ baseUrl: sandbox.sandbox.apiBase, apiKey: sandbox.sandbox.apiKey });
  dir = await tempDir();
  app = await startReceiver();
  const port = await portForRestarts();
  listen = await startListen({
    forwardTo: app.url,
    port,
    inspector: false,
    stateDir: join(dir.path, '.clockhook'),
    faults: { spec: parseFaults('duplicate=100%,types=employee.created'), seed: 1 },
    apiKey: sandbox.sandbox.apiKey,
    apiBase: sandbox.sandbox.apiBase,
    publicUrl: `http://127.0.0.1:${port}/`,
  });
  secret = listen.secret as string;
  const emit = (type: string) => client.request<{ id: string }>('POST', '/sandbox/events', { body: { type } });
  app.setResponder(answering('punch.created'));
  await emit('punch.created');
  const held = (count: number) => () => {
    const all = listen.store.all();
    // Each with the app's answer, or the next delivery may come before the answer is kept.
    if (all.length !== count || all.some((capture) => !capture.forward)) throw new Error(`${all.length} held`);
  };
  await vi.waitFor(held(2), { timeout: 15_000, interval: 20 }); // the 500, then its retry
  await emit('employee.created');
  await vi.waitFor(held(4), { timeout: 15_000, interval: 20 }); // with its duplicate
  await postSigned(listen.ready.listener, BYTES, secret);
  await vi.waitFor(held(5), { timeout: 15_000, interval: 20 });
  file = join(dir.path, 'morning.scenario.json');
  const exported = await cli('captures', 'export', '--format', 'scenario', '-o', file);
  expect(exported.code, exported.stderr).toBe(0);
  scenario = JSON.parse(await readFile(file, 'utf8'));
}, 60_000);

afterAll(async () => {
  await listen?.close();
  await app?.close();
  await sandbox?.close();
  await dir?.remove();
});

describe('a scenario', () => {
  it('holds the deliveries in their order, with their story and answers, and the shipped schema takes it', async () => {
    const schema = JSON.parse(await readFile(new URL('../../clockhook.scenario.schema.json', import.meta.url), 'utf8'));
    const ajv = new Ajv({ strict: true });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    expect(validate(scenario), JSON.stringify(validate.errors)).toBe(true);
    expect(scenario.clockhookScenario).toBe(1);
    const summary = scenario.deliveries.map((d) => [d.event?.type ?? null, d.kind, d.recorded.status]);
    expect(summary).toEqual([
      ['punch.created', 'first', 500],
      ['punch.created', 'retry', 200],
      ['employee.created', 'first', 200],
      ['employee.created', 'duplicate', 200],
      [null, 'first', 200],
    ]);
    const offsets = scenario.deliveries.map((d) => d.at);
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    expect(offsets[0]).toBe(0);
    for (const delivery of scenario.deliveries) expect(delivery.headers).not.toHaveProperty('x-service-signature');
    expect(scenario.deliveries[4]).toMatchObject({ bodyEncoding: 'base64', body: BYTES.toString('base64') });
  });

  it('plays against a fixed app at --speed max: each re-signed and verified, in order, byte for byte; exit 1 naming the change', async () => {
    const fixed = await startReceiver(answering(null));
    try {
      const played = await cli('replay', '--scenario', file, '--to', fixed.url, '--speed', 'max', '--secret', secret);
      expect(played.code, played.stderr).toBe(1);
      expect(played.stdout).toContain('#1 punch.created');
      expect(played.stdout).toMatch(/#1 punch\.created \[evt_\w+\], first delivery: recorded \[500\], now \[200\]/);
      expect(played.stdout).toMatch(/1 answered otherwise than recorded \(#1 500 → 200\)/);
      expect(fixed.received.map((r) => r.body.toString('base64'))).toEqual(
        scenario.deliveries.map((d) => Buffer.from(d.body, d.bodyEncoding).toString('base64')),
      );
      const faulted = await cli(
        'replay',
        '--scenario',
        file,
        '--to',
        fixed.url,
        '--speed',
        'max',
        '--faults',
        'fail=100%',
        '--faults-seed',
        '7',
      );
      expect(faulted.stdout).toContain(
        'Faults: fail=100%:503 (seed 7: --faults-seed 7 repeats them). See docs/faults.md.',
      );
      expect(faulted.stdout).toMatch(
        /#1 punch\.created \[evt_\w+\], first delivery: recorded \[500\], now not sent faults: fail 503/,
      );
      const json = await cli('replay', '--scenario', file, '--to', fixed.url, '--speed', 'max', '--json');
      const lines = json.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.at(-1)).toMatchObject({ event: 'summary', ok: false, played: 5, differences: [1] });
      expect(lines.at(-1).durationMs, 'ms to play 5 deliveries at --speed max').toBeLessThan(1_000);
    } finally {
      await fixed.close();
    }
  });

  it('exits 0 when the app answers as recorded, and plays through the running listen, where it is captured', async () => {
    const before = listen.store.all().length;
    app.setResponder(answering('punch.created'));
    const played = await cli('replay', '--scenario', file, '--speed', 'max', '--json');
    expect(played.code, played.stdout + played.stderr).toBe(0);
    expect(played.stdout).toContain('"ok":true');
    // Five, and listen's own --faults duplicate each employee.created: seven, each signed as the service signs.
    await expect.poll(() => listen.store.all().length).toBe(before + 7);
    expect(listen.store.newest(7).every((capture) => capture.signature.status === 'valid')).toBe(true);
  });

  it('plays from a test through playScenario, at the recorded pace or with faults', async () => {
    const fixed = await startReceiver(answering(null));
    const waits: number[] = [];
    try {
      const sleep = async (ms: number) => void waits.push(ms);
      const result = await playScenario(file, fixed.url, { secret, speed: 2, sleep });
      expect(result.differences.map((d) => d.index)).toEqual([1]);
      expect(result.deliveries.map((d) => d.played.status)).toEqual([200, 200, 200, 200, 200]);
      // Each waits for its recorded offset, halved, from the start of the play.
      expect(waits).toHaveLength(5);
      expect(waits[1]).toBeLessThanOrEqual(scenario.deliveries[1].at / 2);
      expect(waits[1]).toBeGreaterThan(0); // the retry came 0.3 s after the first: half of that, less the first's send
      fixed.received.length = 0;
      const faulted = await playScenario(scenario, fixed.url, { secret, speed: 'max', faults: 'duplicate=100%' });
      expect(faulted.deliveries.every((d) => d.injected?.includes('duplicated'))).toBe(true);
      expect(fixed.received.map(idOf)).toEqual(scenario.deliveries.flatMap((d) => [d.event?.id, d.event?.id]));
    } finally {
      await fixed.close();
    }
  });

  it('stops at the first delivery nothing answers, saying so once, where the rest would be refused alike', async () => {
    const gone = await startReceiver(answering(null));
    await gone.close();
    const played = await cli('replay', '--scenario', file, '--to', gone.url, '--secret', secret, '--speed', 'max');
    expect(played.code).toBe(1);
    expect(played.stdout.match(/ECONNREFUSED/g)).toHaveLength(1);
    expect(played.stdout).toContain(
      `and stopped: nothing answers at ${gone.url}/ (connection refused), so the 4 after #1 were not sent: start the app, then play it again.`,
    );
    const result = await playScenario(scenario, gone.url, { secret, speed: 'max' });
    expect(result).toMatchObject({ ok: false, stopped: expect.stringContaining('connection refused') });
    expect(result.deliveries).toHaveLength(1);
  });

  it('is refused naming the field when its version is another or a field is missing', async () => {
    const bad = join(dir.path, 'bad.scenario.json');
    const { body: _body, ...withoutBody } = scenario.deliveries[0];
    for (const [value, words] of [
      [{ ...scenario, clockhookScenario: 2 }, 'clockhookScenario is 2: this clockhook plays version 1'],
      [{ ...scenario, deliveries: [withoutBody] }, 'deliveries[0].body is missing'],
    ] as const) {
      await writeFile(bad, JSON.stringify(value));
      const played = await cli('replay', '--scenario', bad, '--to', app.url, '--secret', secret);
      expect(played.code).toBe(2);
      expect(played.stderr).toContain(`the scenario ${bad} cannot be played: ${words}`);
      await expect(playScenario(value as unknown as Scenario, app.url, { secret })).rejects.toThrow(words);
    }
    await expect(playScenario(scenario, 'localhost:3000', { secret })).rejects.toThrow('is not an http(s) URL');
    const mixed = await cli('replay', 'cap_0abc', '--scenario', file, '--to', app.url);
    expect(mixed).toMatchObject({ code: 2, stderr: expect.stringContaining('leave out capture ids') });
  });
});
