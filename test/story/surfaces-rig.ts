import { createServer, type Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { sendDelivery } from '../../src/testing/index.js';
import { launchChromium } from '../helpers/browser.js';
import { envelopeBody } from '../helpers/delivery.js';
import { runCli, type SpawnedCli, spawnCli, urlOnLine } from '../helpers/cli.js';
import { post } from '../helpers/listen.js';
import { type McpUnderTest, startMcp } from '../helpers/mcp.js';
import { portForRestarts } from '../helpers/ports.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';

// The set-up of test/story/surfaces-agree.browser.test.ts: one listen (spawned, with routes, faults and a sandbox
// whose retries come 100 times later), an app that answers by event id, a browser and an MCP server, and one
// delivery of each kind listen makes, read back as the record (`captures list --json`) every surface renders.

export type Json = Record<string, any>;
export type Story = {
  kind: string;
  words: string;
  outcome: string;
  status: string;
  tone: string;
  durationMs: number | null;
  answer: string | null;
  event: { state: string; words: string; tone: string; failed: boolean; latest: boolean };
};
export type Recorded = Json & { id: string; source: string; envelope: { id: string } | null; story: Story };

/** How the terminal paints a tone (cli/output.ts's PAINT), with FORCE_COLOR. */
const CODE: Record<string, number> = { ok: 32, bad: 31, warn: 33, info: 36, plain: 90 };
export const painted = (tone: string, text: string) => `\u001b[${CODE[tone]}m${text}\u001b[39m`;

export let dir: Awaited<ReturnType<typeof tempDir>>;
export let app: Receiver;
export let restarted: Server | undefined;
export let listen: SpawnedCli;
export let listener: string;
export let inspector: string;
export let secret: string;
export let browser: Browser;
export let mcp: McpUnderTest;
/** The events the sandbox emitted (trigger): one the app takes, one it fails at first. */
export const triggered: Record<'taken' | 'failed', string> = { taken: '', failed: '' };
/** Every capture as the store holds it at the end, with its story: the record every surface renders. */
export let records: Recorded[];
export const cli = (...args: string[]) => runCli(args, { cwd: dir.path, env: { FORCE_COLOR: '1' } });
export const recordsOf = (eventId: string) => records.filter((r) => r.envelope?.id === eventId);
const seen = new Map<string, number>();

function parsedOr(body: Buffer, otherwise: { id: string; type: string }): { id: string; type: string } {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return otherwise;
  }
}

/** The app: its answer by event id (and by type for the sandbox's events), counting each id's arrivals. */
function startApp() {
  return startReceiver((request, res) => {
    const { id, type } = parsedOr(request.body, { id: 'not JSON', type: '' });
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    const answer = (status: number) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status < 300 ? '{"ok":true}' : '{"error":"handler broken"}');
    };
    if (id === 'evt_cut_length' || id === 'evt_cut_chunked') {
      // A 200 promising 100 bytes (or chunked), then the connection closes.
      const length = id === 'evt_cut_length' ? { 'content-length': '100' } : {};
      res.writeHead(200, { 'content-type': 'application/json', ...length });
      res.write('{"ok":');
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    // The fifth attempt never gets an answer: listen's --timeout ends it.
    if (id === 'evt_fifth') return n < 5 ? answer(500) : undefined;
    if (id === 'evt_500') return answer(500);
    if (id === 'evt_retry') return answer(n === 1 ? 500 : 200);
    if (type === 'employee.created') return answer(n === 1 ? 200 : 500);
    if (type === 'punch.updated') return answer(n === 1 ? 500 : 200);
    answer(200);
  });
}

const send = (id: string, type = 'punch.created', data: Json = { id: 1 }) =>
  sendDelivery(listener, { secret, body: envelopeBody(id, { type, data }) });

/** The one listen, app, browser and MCP server of the file, with every kind of capture made and read back. */
export function useSurfaces(): void {
  beforeAll(async () => {
    dir = await tempDir();
    app = await startApp();
    const [down, dead] = [await portForRestarts(), await portForRestarts()];
    // The sandbox's retries 100 times slower (attempt 2 in 100 min): none comes while the surfaces are compared, however
    // long a loaded machine takes, so every surface tells the same captures.
    const args = ['listen', '--port', '0', '--inspector-port', '0', '--timeout', '4000', '--wait-for-app', '3'];
    args.push('--time-scale', '100', '--faults', 'fail=100%:503,types=schedule.published');
    const routes = [`shift.created=127.0.0.1:${down}`, `shift.deleted=127.0.0.1:${dead}`, app.url];
    listen = spawnCli([...args, ...routes.flatMap((r) => ['--forward-to', r]), '--no-open'], {
      cwd: dir.path,
      env: { FORCE_COLOR: '1' },
    });
    // The URLs on listen's ready lines, without their colour.
    listener = await urlOnLine(listen, /Listening/);
    inspector = await urlOnLine(listen, /Inspector/);
    secret = (await runCli(['secret'], { cwd: dir.path })).stdout.trim();

    // The service's own events: one the app takes, one it fails (the sandbox tries again in a minute).
    triggered.taken = JSON.parse((await cli('trigger', 'employee.created', '--json')).stdout).id;
    triggered.failed = JSON.parse((await cli('trigger', 'punch.updated', '--json')).stdout).id;
    // Held for an app that is down, then taken once it is up; held until listen gives up on one that stays down.
    const held = send('evt_held', 'shift.created');
    const gaveUp = send('evt_gave_up', 'shift.deleted');
    await listen.waitForLine((l) => (l.text ?? '').includes(`app not answering on :${down}`));
    restarted = createServer((_req, res) => res.writeHead(200).end('{"ok":true}'));
    await new Promise<void>((resolve) => restarted?.listen(down, '127.0.0.1', resolve));
    // A 200, a 500, a retry taken, answers cut short, five attempts of which the last times out, a drift.
    await send('evt_ok');
    await send('evt_500');
    await send('evt_retry');
    await send('evt_retry');
    await send('evt_cut_length').catch(() => {}); // the sender sees the connection closed
    await send('evt_cut_chunked').catch(() => {});
    for (let i = 0; i < 5; i++) await send('evt_fifth');
    await send('evt_drift_a', 'time_card.approved', { hours: 8 });
    await send('evt_drift_b', 'time_card.approved', { hours: '8' });
    await post(listener, envelopeBody('evt_unsigned'), { 'content-type': 'application/json' });
    // Answered 503 by a fault on purpose; a body that is not JSON; one over the 5 MiB listen keeps (413, cut).
    await send('evt_faulted', 'schedule.published');
    await post(listener, 'hello, not JSON', { 'content-type': 'text/plain' });
    await post(listener, Buffer.alloc(5 * 1024 * 1024 + 1, 'x')).catch(() => {}); // listen closes the connection
    await Promise.all([held, gaveUp]);
    // Local replays: one answered 200 after the service's delivery failed, one that fails for a delivered event,
    // and one re-signed of a request that carried no event (unsigned).
    const capturesOf = async (eventId: string) =>
      (await cli('captures', 'list', '--json', '--limit', '100')).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Recorded)
        .filter((c) => c.envelope?.id === eventId);
    for (const eventId of Object.values(triggered))
      await vi.waitFor(async () => expect(await capturesOf(eventId)).toHaveLength(1), {
        timeout: 15_000,
        interval: 100,
      });
    for (const eventId of [triggered.failed, triggered.taken, 'evt_unsigned']) {
      const [original] = await capturesOf(eventId);
      expect((await cli('replay', original.id, '--json')).stdout).toContain('"via":"listen"');
    }
    records = (await cli('captures', 'list', '--json', '--limit', '100')).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Recorded)
      .reverse();
    browser = await launchChromium();
    mcp = await startMcp(dir.path);
  }, 90_000);

  afterAll(async () => {
    await mcp?.close();
    await browser?.close();
    await listen?.stop();
    await app?.close();
    await new Promise((resolve) => (restarted ? restarted.close(resolve) : resolve(undefined)));
    await dir?.remove();
  });
}
