import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/contract/index.js';
import { type ListenSession, startListen } from '../../src/listen/index.js';
import { seriousViolations } from '../helpers/axe.js';
import { launchChromium, outputDir } from '../helpers/browser.js';
import { runCli, type SpawnedCli, spawnCli } from '../helpers/cli.js';
import { connectClient } from '../helpers/inspector.js';
import { post, postSigned } from '../helpers/listen.js';
import { portForRestarts } from '../helpers/ports.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';
import { envelopeBody } from '../helpers/delivery.js';

// The list at every width, asserted by layout rather than by pixels, on a store holding all 38 event types,
// retries, a duplicate, replays, a refused capture, one the app never answered, two routes and a missed event.
let dir: Awaited<ReturnType<typeof tempDir>>;
let app: Receiver;
let sandbox: SpawnedCli;
let session: ListenSession;
let browser: Browser;
let page: Page;

const envelope = (id: string, type: string) => envelopeBody(id, { type });
const shot = async (name: string) => page.screenshot({ path: join(await outputDir(), `list-${name}.png`) });

/** The store of the issue, through the real listener (signed deliveries, its replays). */
async function fill(): Promise<void> {
  const deliver = (id: string, type: string) =>
    postSigned(session.ready.listener, envelope(id, type), session.secret as string);
  for (const [i, type] of EVENT_TYPES.entries()) await deliver(`evt_layout_${String(i).padStart(2, '0')}`, type);
  await deliver('evt_layout_fails', 'time_card.rejected'); // 500, then a retry, then a 200: its retry; then a duplicate
  await deliver('evt_layout_fails', 'time_card.rejected');
  await deliver('evt_layout_00', EVENT_TYPES[0]);
  await deliver('evt_layout_quiet', 'shift.published'); // the app drops the connection: no answer
  await post(session.ready.listener, envelope('evt_layout_forged', 'punch.updated')); // refused: unsigned
  const inspector = new URL(session.ready.inspector as string);
  const socket = await connectClient(`ws://${inspector.host}/ws?token=${inspector.searchParams.get('token')}`);
  const first = session.store.all().find((c) => c.envelope?.id === 'evt_layout_01') as { id: string };
  await socket.act({ type: 'replay', captureId: first.id, mode: 'resign' });
  await socket.act({ type: 'replay', captureId: first.id, mode: 'resign', body: envelope('evt_layout_01', 'x') });
  socket.close();
}

/** What the page shows cut: a type, status or mark whose text is wider than its box, or outside its row. */
function cutCells(): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('#captures .capture')].flatMap((row) => {
      const rowBox = row.getBoundingClientRect();
      const cells = [...row.querySelectorAll('.type, .status, .markers .badge, .chip')] as HTMLElement[];
      return cells
        .filter((cell) => {
          const box = cell.getBoundingClientRect();
          return cell.scrollWidth > cell.clientWidth + 1 || box.right > rowBox.right + 1;
        })
        .map((cell) => cell.textContent ?? '');
    }),
  );
}

/** The rows whose first three cells do not start where the column header's do (±1 px). */
function misaligned(): Promise<string[]> {
  return page.evaluate(() => {
    const heads = [...document.querySelectorAll('.capture-head > span')].map((h) => h.getBoundingClientRect().left);
    return [...document.querySelectorAll('#captures .capture')].flatMap((row) => {
      const cells = [...row.children].slice(0, 3).map((c) => c.getBoundingClientRect().left);
      return cells.some((x, i) => Math.abs(x - heads[i]) > 1) ? [row.getAttribute('data-id') ?? ''] : [];
    });
  });
}

/** Pairs among the header, the missed panel, the list and the detail whose visible boxes overlap. */
function overlaps(): Promise<string[]> {
  return page.evaluate(() => {
    const boxes = ['.top', '#missed', '#captures', '#detail']
      .map((selector) => ({ selector, node: document.querySelector(selector) as HTMLElement }))
      .filter(({ node }) => node && node.offsetParent !== null && node.getBoundingClientRect().height > 0)
      .map(({ selector, node }) => ({ selector, box: node.getBoundingClientRect() }));
    const pairs: string[] = [];
    for (const [i, a] of boxes.entries())
      for (const b of boxes.slice(i + 1)) {
        const apart =
          a.box.right <= b.box.left + 0.5 ||
          b.box.right <= a.box.left + 0.5 ||
          a.box.bottom <= b.box.top + 0.5 ||
          b.box.bottom <= a.box.top + 0.5;
        if (!apart) pairs.push(`${a.selector} / ${b.selector}`);
      }
    return pairs;
  });
}

/** Rows wholly inside the list's visible box. */
const visibleRows = () =>
  page.evaluate(() => {
    const list = (document.querySelector('#captures') as HTMLElement).getBoundingClientRect();
    const inside = [...document.querySelectorAll('#captures .capture')].filter((row) => {
      const box = row.getBoundingClientRect();
      return box.top >= list.top - 1 && box.bottom <= Math.min(list.bottom, innerHeight) + 1;
    });
    return inside.length;
  });

beforeAll(async () => {
  dir = await tempDir();
  app = await startReceiver((request, res) => {
    const { id, type } = JSON.parse(String(request.body)) as { id: string; type: string };
    if (id === 'evt_layout_quiet') return res.destroy();
    const fails = type.startsWith('time_card.') && app.received.filter((r) => String(r.body).includes(id)).length < 2;
    res.writeHead(fails ? 500 : 200).end(fails ? '{"error":"broken"}' : 'ok');
  });
  // A missed event: the sandbox gives it up (retries in microseconds) while listen is off.
  sandbox = spawnCli(['sandbox', '--json', '--port', '0', '--time-scale', '0.0001'], { cwd: dir.path });
  await sandbox.waitForLine((line) => line.event === 'ready', 30_000);
  options.port = await portForRestarts();
  options.stateDir = join(dir.path, '.clockhook');
  options.forwardTo = [`time_card.*=${app.url}/cards`, app.url];
  await (await startListen(options)).close();
  const missed = JSON.parse((await runCli(['trigger', 'pay_period.reopened', '--json'], { cwd: dir.path })).stdout);
  const given = async () =>
    JSON.parse((await runCli(['events', 'get', missed.id, '--json'], { cwd: dir.path })).stdout).delivery_attempts;
  for (const deadline = Date.now() + 20_000; (await given()).length < 5;)
    if (Date.now() > deadline) throw new Error('the missed event was not given up in 20 s');
  session = await startListen(options);
  await session.findMissed();
  await fill();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(session.ready.inspector as string);
  await page.locator('#connection.conn-open').waitFor();
}, 120_000);
const options: Parameters<typeof startListen>[0] = { inspectorPort: 0 };

afterAll(async () => {
  await browser?.close();
  await session?.close();
  await sandbox?.stop();
  await app?.close();
  await dir?.remove();
});

describe('the list at every width', () => {
  for (const scheme of ['light', 'dark'] as const) {
    it(`at 1280×800 (${scheme}): columns line up, nothing is cut, nothing overlaps, one header line`, async () => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.emulateMedia({ colorScheme: scheme });
      for (const view of ['request', 'event']) {
        await page.locator(`#view [data-view="${view}"]`).click();
        await expect.poll(() => page.locator('#captures .capture').count()).toBeGreaterThan(38);
        await shot(`1280-${scheme}-${view}`);
        expect(await cutCells(), view).toEqual([]);
        expect(await misaligned(), view).toEqual([]);
      }
      expect(await overlaps()).toEqual([]);
      // The header on one line: endpoint, routes (summarised), mode and connection.
      const top = await page.locator('.top').boundingBox();
      expect(top?.height).toBeLessThan(48);
      await expect.poll(() => page.locator('#forward summary').textContent()).toBe('2 routes');
      await page.locator('#forward summary').click();
      expect(await page.locator('#forward li').allTextContents()).toHaveLength(2);
      await page.locator('#forward summary').click();
      expect(await seriousViolations(page)).toEqual([]);
    }, 60_000);

    it(`at 400×800 (${scheme}): at least 10 rows with the missed strip, the detail a view of its own`, async () => {
      await page.setViewportSize({ width: 400, height: 800 });
      await page.emulateMedia({ colorScheme: scheme });
      await page.locator('#view [data-view="request"]').evaluate((b: HTMLElement) => b.click());
      await expect.poll(() => page.locator('#missed').isVisible()).toBe(true);
      expect(await page.locator('#missed').textContent()).toContain('Missed while away (1)');
      await shot(`400-${scheme}-list`);
      expect(await visibleRows()).toBeGreaterThanOrEqual(10);
      expect(await cutCells()).toEqual([]);
      expect(await misaligned()).toEqual([]);
      expect(await overlaps()).toEqual([]);
      expect(await seriousViolations(page)).toEqual([]);
      // The detail opens over the list, and Back and Escape close it.
      await page.locator('#captures .capture').first().click();
      await expect.poll(() => page.locator('#detail').isVisible()).toBe(true);
      expect(await page.locator('#captures').isVisible()).toBe(false);
      expect(await overlaps()).toEqual([]);
      await shot(`400-${scheme}-detail`);
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole('button', { name: '← Back to the list' }).click();
      await expect.poll(() => page.locator('#captures').isVisible()).toBe(true);
      await page.locator('#captures .capture').nth(1).click();
      await expect.poll(() => page.locator('#detail').isVisible()).toBe(true);
      await page.keyboard.press('Escape');
      await expect.poll(() => page.locator('#captures').isVisible()).toBe(true);
      // The filters and the chart fold behind a button.
      expect(await page.locator('#type-filter').isVisible()).toBe(false);
      await page.getByRole('button', { name: 'Filters and chart' }).click();
      expect(await page.locator('#type-filter').isVisible()).toBe(true);
      await page.getByRole('button', { name: 'Filters and chart' }).click();
    }, 60_000);
  }

  it('moves the split with the mouse and the keys, and keeps it across a reload', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: 'light' });
    const splitter = page.getByRole('separator', { name: 'Width of the list' });
    const start = Number(await splitter.getAttribute('aria-valuenow'));
    const box = (await splitter.boundingBox()) as { x: number; y: number; width: number; height: number };
    await page.mouse.move(box.x + 3, box.y + 200);
    await page.mouse.down();
    await page.mouse.move(box.x + 103, box.y + 200, { steps: 5 });
    await page.mouse.up();
    await expect.poll(async () => Number(await splitter.getAttribute('aria-valuenow'))).toBe(start + 100);
    await splitter.focus();
    await page.keyboard.press('ArrowLeft');
    await expect.poll(async () => Number(await splitter.getAttribute('aria-valuenow'))).toBe(start + 76);
    const listWidth = await page.locator('.list-pane').evaluate((n) => n.getBoundingClientRect().width);
    await page.reload();
    await page.locator('#connection.conn-open').waitFor();
    expect(Number(await splitter.getAttribute('aria-valuenow'))).toBe(start + 76);
    expect(await page.locator('.list-pane').evaluate((n) => n.getBoundingClientRect().width)).toBeCloseTo(listWidth, 0);
  }, 30_000);
});
