import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, outputDir } from '../helpers/browser.js';
import { seriousViolations } from '../helpers/axe.js';
import { runCli } from '../helpers/cli.js';
import { startInspectedSession } from '../helpers/inspector.js';
import { postSigned } from '../helpers/listen.js';
import { answer200 } from '../helpers/receiver.js';
import { envelopeBody } from '../helpers/delivery.js';

/**
 * The inspector's second edition in Chromium: events with their story, dense rows, tabs, the diff, true
 * states, the window fitted, the dark scheme, the keys, and axe-core's accessibility checks. Screenshots
 * go to test-results/.
 */
let t: Awaited<ReturnType<typeof startInspectedSession>>;
let browser: Browser;
let page: Page;
const problems: string[] = [];

const rows = () => page.locator('#captures .capture');
/**
 * The row of one event id, matched on the id itself: a row's text runs its cells together, so `hasText` with
 * evt_dense_23 also took evt_dense_2's row when its duration began with a 3 ("evt_dense_2" + "31 ms").
 */
const rowOf = (eventId: string) => rows().filter({ has: page.locator(`.id[title="${eventId}"]`) });
/** Opens a tab of the detail, and waits until it is drawn. */
async function openTab(name: string) {
  await page.getByRole('tab', { name, exact: true }).click();
  await page.locator(`[role="tabpanel"][aria-labelledby="tab-${name.toLowerCase()}"]`).waitFor();
}
const shot = async (name: string, on: Page = page) => on.screenshot({ path: join(await outputDir(), name) });

const envelope = (id: string, data: object = {}) => envelopeBody(id, { type: 'time_entry.created', created: 1, data });
const deliver = (body: string) => postSigned(t.session.ready.listener, body, t.session.secret as string);

beforeAll(async () => {
  t = await startInspectedSession();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  await page.goto(t.session.ready.inspector as string);
  await page.locator('#connection.conn-open').waitFor();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the inspector, second edition', () => {
  it('tells an event’s story: one row per event by default, and its deliveries in order with true names', async () => {
    // The app is down for the first delivery (500): the second is a retry; once it took one (200),
    // a third is a duplicate.
    t.app.setResponder((_request, res) => res.writeHead(500).end('down'));
    expect((await deliver(envelope('evt_story'))).status).toBe(500);
    t.app.setResponder(answer200);
    expect((await deliver(envelope('evt_story'))).status).toBe(200);
    expect((await deliver(envelope('evt_story'))).status).toBe(200);
    const row = rows().filter({ hasText: 'evt_story' });
    await expect.poll(() => row.textContent()).toContain('3 deliveries');
    expect(await row.count()).toBe(1);
    expect(await page.getByRole('button', { name: 'By event' }).getAttribute('aria-pressed')).toBe('true');
    await row.click();
    // Opening an event shows its timeline, beside the service's view.
    await expect.poll(() => page.getByRole('tab', { name: 'Attempts' }).getAttribute('aria-selected')).toBe('true');
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await expect.poll(() => page.locator('#detail .result.ok').textContent()).toContain('the app answered 200');
    // An edited replay: the body differs from the capture it replays.
    await page.getByRole('button', { name: 'Edit & replay' }).click();
    await page.getByLabel('Body to replay').fill(envelope('evt_story', { hours: 8 }));
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => row.textContent()).toContain('5 deliveries');
    const story = page.locator('#detail .timeline li .story');
    await expect
      .poll(() => story.allTextContents())
      .toEqual(['first delivery', 'retry 1', 'duplicate (the app had taken it)', 'replay', 'edited replay']);
    await shot('event-timeline-1280.png');
    await page.setViewportSize({ width: 400, height: 800 });
    await shot('event-timeline-400.png');
    await page.setViewportSize({ width: 1280, height: 800 });

    // By request: one row per capture, each saying what it was.
    await page.getByRole('button', { name: 'By request' }).click();
    const each = rows().filter({ hasText: 'evt_story' });
    await expect.poll(() => each.count()).toBe(5);
    expect(await each.locator('.badge').allTextContents()).toEqual([
      'edited replay',
      'replay',
      'duplicate (the app had taken it)',
      'retry 1',
    ]);
    expect(await each.locator('.chip').allTextContents()).toEqual(['200', '200', '200', '200', '500']);
    expect(await each.last().locator('.chip').getAttribute('class')).toBe('chip bad');
    await page.getByRole('button', { name: 'By event' }).click();
    await expect.poll(() => rows().filter({ hasText: 'evt_story' }).count()).toBe(1);
  });

  it('diffs an edited replay against the capture it came from: the JSON path, old and new', async () => {
    await page.getByRole('button', { name: 'By request' }).click();
    await rows().filter({ hasText: 'evt_story' }).filter({ hasText: 'edited replay' }).click();
    await page.keyboard.press('d');
    await expect.poll(() => page.getByRole('tab', { name: 'Diff' }).getAttribute('aria-selected')).toBe('true');
    const cells = page.locator('#detail table.diff tr:has(td)').first().locator('td');
    await expect.poll(() => cells.allTextContents()).toEqual(['data.hours', '(absent)', '8']);
    await shot('diff-1280.png');
    await page.setViewportSize({ width: 400, height: 800 });
    await shot('diff-400.png');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'By event' }).click();
  });

  it('filters Failed by the latest delivery of each event, not by any failure on the way', async () => {
    t.app.setResponder((_request, res) => res.writeHead(502).end('still down'));
    expect((await deliver(envelope('evt_still_failing'))).status).toBe(502);
    t.app.setResponder(answer200);
    await page.locator('#status-filter').selectOption('failed');
    // evt_story failed first and was taken later: not failed now. (Both at once: the filter applies at the
    // page's next frame, and evt_still_failing is shown before it too.)
    const shown = async () => [
      await rows().filter({ hasText: 'evt_still_failing' }).count(),
      await rows().filter({ hasText: 'evt_story' }).count(),
    ];
    await expect.poll(shown).toEqual([1, 0]);
    await page.locator('#status-filter').selectOption('all');
  });

  it('fits the window at 1280×800 and 400×800, with at least 18 one-line rows at 1280 px', async () => {
    for (let i = 0; i < 24; i++) expect((await deliver(envelope(`evt_dense_${i}`))).status).toBe(200);
    await expect.poll(() => rowOf('evt_dense_23').count()).toBe(1);
    for (const [width, height] of [
      [1280, 800],
      [400, 800],
    ]) {
      await page.setViewportSize({ width, height });
      const overflow = await page.evaluate(() => ({
        scroll: document.documentElement.scrollHeight,
        inner: window.innerHeight,
        wide: document.documentElement.scrollWidth,
        innerWide: window.innerWidth,
      }));
      expect(overflow.scroll, `${width}: no document scrollbar`).toBeLessThanOrEqual(overflow.inner);
      expect(overflow.wide, `${width}: no sideways scrollbar`).toBeLessThanOrEqual(overflow.innerWide);
      await shot(`event-view-${width}.png`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    const layout = await page.evaluate(() => {
      const list = document.querySelector('#captures')!.getBoundingClientRect();
      const all = [...document.querySelectorAll('#captures .capture')].map((row) => row.getBoundingClientRect());
      return {
        visible: all.filter((row) => row.top >= list.top && row.bottom <= list.bottom).length,
        heights: all.map((r) => r.height),
      };
    });
    expect(layout.visible).toBeGreaterThanOrEqual(18);
    // One line each: no row taller than a line and its padding.
    expect(Math.max(...layout.heights)).toBeLessThan(30);
  });

  it('shows the detail in ARIA tabs, the capture’s actions above them, the event’s in Attempts, the endpoint’s in the header', async () => {
    await rowOf('evt_dense_3').click();
    await openTab('Request');
    const tabs = page.getByRole('tablist').getByRole('tab');
    expect(await tabs.allTextContents()).toEqual(['Request', 'Response', 'Signature', 'Attempts', 'Diff']);
    const panel = page.getByRole('tabpanel');
    expect(await panel.getAttribute('aria-labelledby')).toBe('tab-request');
    // Arrow keys move between tabs, as the ARIA pattern has it.
    await page.getByRole('tab', { name: 'Request' }).focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Response');
    await expect.poll(() => panel.getAttribute('aria-labelledby')).toBe('tab-response');
    const group = (name: string) => page.getByRole('group', { name }).getByRole('button').allTextContents();
    expect(await group('This capture')).toEqual([
      'Replay',
      'Replay as-is',
      'Edit & replay',
      'Copy as curl',
      'Download JSON',
      'Download HAR',
      'Save as scenario',
      'Pin',
    ]);
    expect(await group('The endpoint')).toEqual(['Ping endpoint']);
    await openTab('Attempts');
    await expect.poll(() => group('This event')).toEqual(['Redeliver', 'Refresh attempts']);
  });

  it('charts deliveries per minute with a time axis, the counts on hover or focus', async () => {
    expect(await page.locator('.axis span').allTextContents()).toEqual(['30 min ago', '15 min ago', 'now']);
    expect(await page.locator('#chart-peak').textContent()).toMatch(/^peak \d+\/min$/);
    const minute = page.locator('#chart g').last();
    await minute.focus();
    await expect
      .poll(() => page.locator('#chart-value').textContent())
      .toMatch(/^\d\d:\d\d( [AP]M)?: \d+ 2xx, [1-9]\d* failed, \d+ rejected$/);
    expect(await minute.getAttribute('aria-label')).toBe(await page.locator('#chart-value').textContent());
  });

  it('downloads the HAR that captures export --format har writes', async () => {
    await rowOf('evt_dense_5').click();
    const id = await rowOf('evt_dense_5').getAttribute('data-id');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download HAR' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${id}.har`);
    const fromPage = JSON.parse(await readFile(await download.path(), 'utf8'));
    const fromCli = await runCli(['captures', 'export', id as string, '--format', 'har'], { cwd: t.dir });
    expect(fromCli.code).toBe(0);
    expect(fromPage).toEqual(JSON.parse(fromCli.stdout));
  });

  it('moves with j and k, opens with Enter, edits with e, and shows the keys with ?', async () => {
    await rows().first().click();
    const selected = () => page.locator('#captures .capture.selected').getAttribute('data-id');
    const first = await selected();
    await page.locator('body').press('j');
    await expect.poll(selected).not.toBe(first);
    await page.locator('body').press('k');
    await expect.poll(selected).toBe(first);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('tab');
    await page.locator('body').press('e');
    await expect.poll(() => page.getByLabel('Body to replay').count()).toBe(1);
    // The focus is in the editor: what is typed next goes into the body.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')))
      .toBe('Body to replay');
    await page.getByRole('button', { name: 'Close' }).click();
    await page.locator('body').press('?');
    await expect.poll(() => page.getByRole('dialog', { name: 'Keys' }).isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog', { name: 'Keys' }).isVisible()).toBe(false);
  });

  it('has no serious or critical axe-core violation on the list, on each tab, and in the dark scheme', async () => {
    await rows().filter({ hasText: 'evt_story' }).click();
    expect(await seriousViolations(page)).toEqual([]);
    for (const name of ['Request', 'Response', 'Signature', 'Attempts', 'Diff']) {
      await openTab(name);
      expect(await seriousViolations(page), name).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      expect(background).toBe('rgb(21, 23, 28)');
      await openTab('Request');
      expect(await seriousViolations(page)).toEqual([]);
      await openTab('Attempts');
      expect(await seriousViolations(page)).toEqual([]);
      await shot('dark-1280.png');
      await page.setViewportSize({ width: 400, height: 800 });
      await shot('dark-400.png');
      await page.setViewportSize({ width: 1280, height: 800 });
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
  });

  it('says once that a refused token was refused, and nothing about endpoints, forwarding or reconnecting', async () => {
    const wrong = (t.session.ready.inspector as string).replace(/token=[^&]+/, 'token=not-the-token');
    for (const [width, height] of [
      [1280, 800],
      [400, 800],
    ]) {
      const other = await browser.newPage({ viewport: { width, height } });
      try {
        await other.goto(wrong);
        const alert = other.getByRole('alert');
        await expect.poll(() => alert.textContent()).toContain("clockhook refused this page's token.");
        expect(await alert.textContent()).toContain('Open the inspector URL that clockhook listen printed');
        const shown = await other.evaluate(() => document.body.innerText);
        for (const word of ['Endpoint', 'Forwarding', 'reconnecting', 'none registered'])
          expect(shown, word).not.toContain(word);
        // Nothing keeps trying: the page asked once.
        await other.waitForTimeout(1500);
        expect(await other.evaluate(() => document.body.innerText)).not.toContain('reconnecting');
        await shot(`refused-token-${width}.png`, other);
        expect(await seriousViolations(other)).toEqual([]);
      } finally {
        await other.close();
      }
    }
    expect(problems).toEqual([]);
  });
});
