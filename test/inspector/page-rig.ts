// What the page's browser test files share: one listen with its inspector (startInspectedSession) and one
// Chromium page on it for the file, made before its tests, and what the page reported as errors. `t`,
// `browser` and `page` are live bindings, set once a file's usePage() has run its set-up.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import type { ApiClient } from '../../src/api/index.js';
import { launchChromium } from '../helpers/browser.js';
import { startInspectedSession } from '../helpers/inspector.js';

export let t: Awaited<ReturnType<typeof startInspectedSession>>;
export let browser: Browser;
export let page: Page;
/** The page's uncaught errors and console errors: a test that looks at the page expects none. */
export const problems: string[] = [];

export function usePage(): void {
  beforeAll(async () => {
    t = await startInspectedSession();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    await page.goto(t.session.ready.inspector as string);
    await page.locator('#connection.conn-open').waitFor();
    // These tests look at captures one by one; the page keeps the choice across reloads.
    await page.getByRole('button', { name: 'By request' }).click();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
}

export const api = () => t.session.client as ApiClient;

/** Opens a tab of the detail (the page keeps the open tab from one capture to the next). */
export const openTab = (on: Page, name: string) => on.getByRole('tab', { name, exact: true }).click();

/** The rows of the captures list. */
export const rows = () => page.locator('#captures .capture');

/**
 * Opens the shown capture's Attempts tab, which lists the one attempt at `eventId`; then the event is redelivered
 * by someone else (the CLI, a teammate), and the new capture tells the page to ask again: two. Returns the rows of
 * the attempts.
 */
export async function attemptsFollowRedelivery(eventId: string) {
  await openTab(page, 'Attempts');
  const attempts = page.locator('#detail table.attempts tr:has(td)');
  await expect.poll(() => attempts.count()).toBe(1);
  await api().redeliverEvent(eventId);
  await expect.poll(() => rows().filter({ hasText: eventId }).count()).toBe(2);
  await expect.poll(() => attempts.count()).toBe(2);
  return attempts;
}
