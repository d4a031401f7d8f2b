import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WHILE_LISTEN_RUNS } from '../../src/cli/catch-up.js';
import { deliveryJson, deliveryLine } from '../../src/cli/delivery-line.js';
import { type ListenSession, missedSummary, startListen } from '../../src/listen/index.js';
import type { DeliveryReport } from '../../src/listener/index.js';
import { launchChromium } from '../helpers/browser.js';
import { runCli, type SpawnedCli, spawnCli } from '../helpers/cli.js';
import { connectClient } from '../helpers/inspector.js';
import { recordingLogger } from '../helpers/logger.js';
import { portForRestarts } from '../helpers/ports.js';
import { type FixableApp, startFixableApp } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';

// One scenario, told by every surface at each step: the sandbox retries at 0.15 of the contract's
// delays (1 min -> 9 s); an app that fails, then is fixed; a duplicate forced with `events redeliver`;
// replays from the CLI and from the page; listen stopped and started while events happen; the endpoint
// disabled and re-enabled. At each step, listen's terminal and --json lines, `captures list/show --json`,
// the HAR, the WebSocket messages, the page's rows and timeline, `replay --failed --dry-run` and the
// missed list must agree with each other and with what happened.
const SCALE = 0.15;
const RETRY_MS = 60_000 * SCALE;
const DUPLICATE = 'duplicate (the app had taken it)';

type Json = Record<string, any>;

describe('one story of each delivery, on every surface', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let app: FixableApp;
  let sandbox: SpawnedCli;
  let session: ListenSession;
  let browser: Browser;
  let page: Page;
  let socket: Awaited<ReturnType<typeof connectClient>>;
  let endpointId: number;
  const reports: DeliveryReport[] = [];
  const logger = recordingLogger();
  const events: Record<string, string> = {};
  let options: Parameters<typeof startListen>[0];

  const cli = (...args: string[]) => runCli(args, { cwd: dir.path });
  const json = async (...args: string[]) => {
    const res = await cli(...args);
    expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
    return JSON.parse(res.stdout) as Json;
  };
  const lines = (text: string) =>
    text
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Json);

  /** Starts listen (as `clockhook listen` does) and opens its page and a WebSocket on it. */
  async function listen(): Promise<void> {
    session = await startListen(options);
    endpointId = Number(session.ready.endpointId);
    const inspector = new URL(session.ready.inspector as string);
    socket = await connectClient(`ws://${inspector.host}/ws?token=${inspector.searchParams.get('token')}`);
    await page.goto(inspector.href);
  }

  async function stopListen(): Promise<void> {
    socket.close();
    await session.close();
  }

  /** Waits for listen to answer the `n`th delivery (1-based) of an event, and returns its report. */
  async function answered(eventId: string, n: number): Promise<DeliveryReport> {
    await expect
      .poll(() => reports.filter((r) => r.eventId === eventId).length, { timeout: RETRY_MS + 15_000 })
      .toBeGreaterThanOrEqual(n);
    return reports.filter((r) => r.eventId === eventId)[n - 1];
  }

  /** What listen's terminal said of each delivery of an event: the words before the arrow, "first delivery" when none. */
  const terminalKinds = (eventId: string) =>
    reports
      .filter((r) => r.eventId === eventId)
      .map(
        (r) =>
          /^\d\d:\d\d:\d\d(?: (.+?))? --> /.exec(stripVTControlCharacters(deliveryLine(r)))?.[1] ?? 'first delivery',
      );

  /** The row of an event in the page's By event view: its status chip and marks. */
  async function pageRow(eventId: string) {
    const row = page.locator('#captures li.capture', { has: page.locator(`.id[title="${eventId}"]`) });
    return { chip: await row.locator('.chip').textContent(), marks: await row.locator('.markers').textContent() };
  }

  /** The events each surface counts as failed: they must be one set. */
  async function failedEverywhere(): Promise<string[][]> {
    const [listed, dryRun] = await Promise.all([
      cli('captures', 'list', '--status', 'failed', '--json', '--limit', '1000'),
      cli('replay', '--failed', '--dry-run', '--json'),
    ]);
    await page.selectOption('#status-filter', 'failed');
    // The page renders at its next animation frame (scheduleRender): a frame asked for now comes after it.
    await page.evaluate(() => new Promise(requestAnimationFrame));
    const shown = await page
      .locator('#captures li.capture .id')
      .evaluateAll((ids) => ids.map((id) => id.getAttribute('title') ?? ''));
    await page.selectOption('#status-filter', 'all');
    const latest = new Map<string, Json>();
    for (const m of socket.messages) {
      if (m.type === 'snapshot') for (const story of m.stories) latest.set(story.key, story);
      if (m.type === 'capture') latest.set(m.story.key, m.story);
    }
    const sorted = (ids: string[]) => [...new Set(ids)].sort();
    return [
      sorted(lines(listed.stdout).map((c) => c.envelope.id)),
      sorted(lines(dryRun.stdout).map((l) => l.eventId)),
      sorted(shown),
      sorted([...latest.values()].filter((s) => s.failed).map((s) => s.key)),
    ];
  }

  /**
   * Asserts that every surface tells an event the same way: each capture's words in order, and the
   * event's state, with `status` the status of its newest capture.
   */
  async function toldEverywhere(eventId: string, kinds: string[], state: string, status: number) {
    expect(terminalKinds(eventId), 'the terminal').toEqual(kinds);
    const jsonLines = reports.filter((r) => r.eventId === eventId).map(deliveryJson) as Json[];
    expect(
      jsonLines.map((l) => l.story.words),
      '--json',
    ).toEqual(kinds);
    const listed = lines((await cli('captures', 'list', '--json', '--limit', '1000')).stdout)
      .filter((c) => c.envelope?.id === eventId)
      .reverse();
    expect(
      listed.map((c) => c.story.words),
      'captures list --json',
    ).toEqual(kinds);
    const newest = listed.at(-1) as Json;
    expect(newest.story.event, 'captures list --json: the newest').toMatchObject({ state, latest: true });
    const [shown, har] = await Promise.all([
      json('captures', 'show', newest.id, '--json'),
      json('captures', 'export', ...listed.map((c) => c.id), '--format', 'har'),
    ]);
    expect(shown.story, 'captures show --json').toEqual(newest.story);
    expect(
      har.log.entries.map((e: Json) => e._clockhook.story.words),
      'the HAR',
    ).toEqual(kinds);
    const message = await socket.waitFor(
      (m) =>
        m.type === 'capture' &&
        m.capture.id === newest.id &&
        m.story.state === state &&
        Object.keys(m.story.deliveries).length === kinds.length,
    );
    expect(
      Object.entries(message.story.deliveries)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([, d]) => (d as Json).words),
      'the WebSocket',
    ).toEqual(kinds);
    await expect.poll(async () => (await pageRow(eventId)).chip, { message: 'the page: the row' }).toBe(String(status));
    const marks = (await pageRow(eventId)).marks ?? '';
    if (state === 'delivered') expect(marks).not.toMatch(/failing|given up|disabled/);
    else expect(marks).toContain(state);
    if (kinds.length > 1) expect(marks).toContain(`${kinds.length} deliveries`);
  }

  /** Waits until the service's first retry of an event came due (while the endpoint was disabled: not made). */
  async function pastFirstRetry(eventId: string): Promise<void> {
    const event = await json('events', 'get', eventId, '--json');
    const due = Date.parse(event.delivery_attempts[0].createdAt) + RETRY_MS;
    await expect.poll(() => Date.now() > due + 500, { timeout: RETRY_MS + 5_000 }).toBe(true);
  }

  /** The page's timeline of an event: what each capture of it was, in order. */
  async function pageTimeline(eventId: string): Promise<string[]> {
    await page.locator('#captures li.capture', { has: page.locator(`.id[title="${eventId}"]`) }).click();
    return page.locator('.timeline li .story').allTextContents();
  }

  beforeAll(async () => {
    dir = await tempDir();
    app = await startFixableApp();
    sandbox = spawnCli(['sandbox', '--json', '--port', '0', '--time-scale', String(SCALE)], { cwd: dir.path });
    await sandbox.waitForLine((line) => line.event === 'ready', 30_000);
    options = {
      forwardTo: app.url,
      port: await portForRestarts(),
      inspectorPort: 0,
      stateDir: join(dir.path, '.clockhook'),
      logger,
      onDelivery: (report) => reports.push(report),
    };
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await listen();
  }, 90_000);

  afterAll(async () => {
    socket?.close();
    await session?.close();
    await browser?.close();
    await sandbox?.stop();
    await app?.close();
    await dir?.remove();
  });

  it('a delivery the app failed is failing everywhere; redelivered after the fix, it is "retry 1", and delivered', async () => {
    app.failing = true;
    events.e1 = (await json('trigger', 'time_card.approved', '--json')).id;
    await answered(events.e1, 1);
    // No retry of the service's comes while the surfaces are read: the endpoint is disabled, and the
    // retry that comes due meanwhile is not made (nor later ones).
    await cli('endpoints', 'disable', String(endpointId));
    await toldEverywhere(events.e1, ['first delivery'], 'failing', 500);
    expect(await failedEverywhere()).toEqual(Array(4).fill([events.e1]));
    app.failing = false;
    await pastFirstRetry(events.e1);
    await cli('endpoints', 'enable', String(endpointId));
    // Asked to redeliver while the app had not taken the event: a retry.
    await json('events', 'redeliver', events.e1, '--json');
    await answered(events.e1, 2);
    await toldEverywhere(events.e1, ['first delivery', 'retry 1'], 'delivered', 200);
    expect(await failedEverywhere()).toEqual(Array(4).fill([]));
    expect(reports.every((r) => r.duplicateOf === null)).toBe(true);
  }, 90_000);

  it('a redelivery after the app took it is a duplicate, naming the capture it took', async () => {
    await json('events', 'redeliver', events.e1, '--json');
    const report = await answered(events.e1, 3);
    await toldEverywhere(events.e1, ['first delivery', 'retry 1', DUPLICATE], 'delivered', 200);
    expect(report.duplicateOf).toBe(reports.filter((r) => r.eventId === events.e1)[1].captureId);
    expect(await pageTimeline(events.e1)).toEqual(['first delivery', 'retry 1', DUPLICATE]);
  }, 60_000);

  it('a failed event replayed with a 200 from the CLI and from the page is delivered everywhere at once', async () => {
    app.failing = true;
    events.e2 = (await json('trigger', 'employee.created', '--json')).id;
    await answered(events.e2, 1);
    // Asked, the service says when it tries again, as the sandbox's time scale has it (9 s).
    expect((await json('events', 'get', events.e2, '--json')).story).toMatchObject({
      state: 'failing',
      words: 'failing: the service tries again in under a minute (attempt 2 of 5)',
    });
    // Its retries stop while the endpoint is disabled: the replays tell the rest of the story.
    await cli('endpoints', 'disable', String(endpointId));
    await toldEverywhere(events.e2, ['first delivery'], 'failing', 500);
    expect(await failedEverywhere()).toEqual(Array(4).fill([events.e2]));
    // Where the service is asked, the same event is disabled: nothing comes while the endpoint is.
    expect((await json('events', 'get', events.e2, '--json')).story).toMatchObject({ state: 'disabled' });

    app.failing = false;
    const replayed = await cli('replay', '--failed', '--json');
    expect(replayed.code, replayed.stderr).toBe(0);
    await answered(events.e2, 2);
    await toldEverywhere(events.e2, ['first delivery', 'replay'], 'delivered', 200);
    expect(await failedEverywhere()).toEqual(Array(4).fill([]));
    expect((await cli('replay', '--failed', '--dry-run')).stderr).toContain('Nothing to replay: no event failed');
    expect((await json('events', 'get', events.e2, '--json')).story).toMatchObject({ state: 'delivered' });

    // From the page: Replay, then an edited replay through the page's own WebSocket action.
    await page.locator('#captures li.capture', { has: page.locator(`.id[title="${events.e2}"]`) }).click();
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await answered(events.e2, 3);
    const first = reports.find((r) => r.eventId === events.e2)?.captureId;
    const body = JSON.stringify({ id: events.e2, object: 'event', type: 'employee.created', data: { edited: true } });
    expect((await socket.act({ type: 'replay', captureId: first, mode: 'resign', body })).ok).toBe(true);
    await answered(events.e2, 4);
    const told = ['first delivery', 'replay', 'replay', 'edited replay'];
    await toldEverywhere(events.e2, told, 'delivered', 200);
    await expect.poll(() => pageTimeline(events.e2)).toEqual(told);
  }, 90_000);

  it('what came while listen was off is missed, said truthfully, and leaves the list live as it arrives', async () => {
    await stopListen();
    events.e3 = (await json('trigger', 'shift.published', '--json')).id; // made while disabled: never sent
    await listen();
    const missed = await session.findMissed();
    expect(missed.map((m) => [m.eventId, m.outlook])).toEqual([[events.e3, { next: 'none', reason: 'disabled' }]]);
    expect(missedSummary(missed, { hint: WHILE_LISTEN_RUNS })).toBe(
      `1 event came while listen was off: 1 will not come while the endpoint is disabled. Get them now: ${WHILE_LISTEN_RUNS}`,
    );
    const panel = page.getByRole('region', { name: 'Missed while away' });
    await expect.poll(() => panel.textContent()).toContain('Missed while away (1)');
    expect(await panel.textContent()).toContain(`${events.e3} · not sent while the endpoint is disabled`);

    // E2's retry came due while the endpoint was disabled, so the service did not make it (nor later ones);
    // then the other terminal's command re-enables the endpoint and gets E3 now.
    await pastFirstRetry(events.e2);
    const redelivered = await cli('events', 'redeliver', '--missed', '--yes');
    expect(redelivered.code, redelivered.stderr).toBe(0);
    expect(redelivered.stdout).toContain(`Re-enabled endpoint ${endpointId}`);
    expect(redelivered.stdout).toContain('1 will not come while the endpoint is disabled.');
    await answered(events.e3, 1);
    await expect.poll(() => panel.isHidden()).toBe(true);
    await socket.waitFor((m) => m.type === 'missed' && m.missed.length === 0);
    expect(logger.infos.join('\n')).toContain(
      `${events.e3} (missed while listen was off) has arrived; every missed event is here now.`,
    );
    await toldEverywhere(events.e3, ['first delivery'], 'delivered', 200);
    expect((await cli('events', 'redeliver', '--missed')).stdout).toContain('missed nothing');
    expect(await failedEverywhere()).toEqual(Array(4).fill([]));
    expect(reports.filter((r) => r.eventId === events.e2)).toHaveLength(4);
  }, 120_000);
});
