// The inspector page in Chromium: the service's attempts at a delivery, kept up to date as it delivers again, and at a narrow width.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { WebSocket } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { outputDir } from '../helpers/browser.js';
import { answer200 } from '../helpers/receiver.js';
import { api, attemptsFollowRedelivery, openTab, page, rows, t, usePage } from './page-rig.js';

usePage();

describe('the inspector page in Chromium: the attempts', () => {
  it("updates the shown event's attempts by itself when the service delivers it again", async () => {
    // Another event's capture, to show meanwhile.
    const before = await api().request<{ id: string }>('POST', '/sandbox/events', { body: { type: 'punch.created' } });
    await rows().filter({ hasText: before.id }).first().waitFor();
    const event = await api().request<{ id: string }>('POST', '/sandbox/events', { body: { type: 'punch.updated' } });
    await rows().filter({ hasText: event.id }).first().click();
    const attempts = await attemptsFollowRedelivery(event.id);
    // Delivered again while another capture is shown: asked for anew when it is selected again.
    await rows().filter({ hasNotText: event.id }).first().click();
    await api().redeliverEvent(event.id);
    await expect.poll(() => rows().filter({ hasText: event.id }).count()).toBe(3);
    await rows().filter({ hasText: event.id }).last().click();
    await expect.poll(() => attempts.count()).toBe(3);
  });

  it('updates the attempts by itself after Redeliver when the redelivery goes to another endpoint', async () => {
    const own = t.session.ready.endpointId as number;
    const other = await api().createEndpoint({ url: t.app.url, enabledEvents: ['punch.deleted'] });
    try {
      const event = await api().request<{ id: string }>('POST', '/sandbox/events', { body: { type: 'punch.deleted' } });
      await rows().filter({ hasText: event.id }).first().click();
      await openTab(page, 'Attempts');
      const attempts = page.locator('#detail table.attempts tr:has(td)');
      await expect.poll(() => attempts.count()).toBe(2);
      // Only the other endpoint gets the redelivery, so no capture arrives here to say it happened.
      await api().updateEndpoint(own, { status: 'disabled' });
      await page.getByRole('button', { name: 'Redeliver' }).click();
      await expect
        .poll(() => page.locator('#detail .result.ok').textContent())
        .toContain('Redelivery queued for 1 endpoint');
      await expect.poll(() => attempts.count()).toBe(3);
      expect(await rows().filter({ hasText: event.id }).count()).toBe(1);
    } finally {
      await api().updateEndpoint(own, { status: 'enabled' });
      await api().deleteEndpoint(other.id);
    }
  });

  it('asks the service for the attempts again only once the delivery has been answered', async () => {
    let eventId = '';
    const asked: number[] = [];
    const watch = (socket: WebSocket) =>
      socket.on('framesent', ({ payload }) => {
        const message = JSON.parse(String(payload));
        if (message.type === 'attempts' && message.eventId === eventId) asked.push(performance.now());
      });
    page.on('websocket', watch);
    let answeredAt = 0;
    t.app.setResponder((request, res, req) =>
      setTimeout(() => {
        answeredAt = performance.now();
        answer200(request, res, req);
      }, 2000),
    );
    try {
      await page.reload();
      await page.locator('#connection.conn-open').waitFor();
      eventId = (await api().request<{ id: string }>('POST', '/sandbox/events', { body: { type: 'shift.published' } }))
        .id;
      // Selected while the app has not answered: the service lists no attempt yet, and will not before.
      await rows().filter({ hasText: eventId }).first().click();
      await openTab(page, 'Attempts');
      const attempts = page.locator('#detail table.attempts tr:has(td)');
      await expect.poll(() => attempts.count(), { timeout: 10_000 }).toBe(1);
      expect(answeredAt).toBeGreaterThan(0);
      expect(asked.filter((at) => at < answeredAt)).toHaveLength(1);
    } finally {
      page.off('websocket', watch);
      t.app.setResponder(answer200);
    }
  });

  it('selected after its delivery was answered but before the service lists the attempt, shows it by itself', async () => {
    const own = t.session.ready.endpointId as number;
    const listenerUrl = t.session.ready.listener;
    // A hop between the service and the listener that holds the listener's answer 2 s: the page learns at
    // once that the delivery was answered, the service lists its attempt only 2 s later.
    const hop = createServer((req, res) => {
      const { host: _host, ...headers } = req.headers;
      const onward = request(new URL(req.url ?? '/', listenerUrl), { method: req.method, headers }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () =>
          setTimeout(() => res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(chunks)), 2000),
        );
      });
      req.pipe(onward);
    });
    await new Promise<void>((resolve) => hop.listen(0, '127.0.0.1', resolve));
    try {
      await api().updateEndpoint(own, { url: `http://127.0.0.1:${(hop.address() as AddressInfo).port}/` });
      const eventId = (
        await api().request<{ id: string }>('POST', '/sandbox/events', { body: { type: 'employee.created' } })
      ).id;
      const row = rows().filter({ hasText: eventId });
      await row.locator('.chip.ok', { hasText: '200' }).waitFor();
      expect((await api().getEvent(eventId)).delivery_attempts).toEqual([]);
      await row.click();
      await openTab(page, 'Attempts');
      const attempts = page.locator('#detail table.attempts tr:has(td)');
      await expect.poll(() => attempts.count(), { timeout: 10_000 }).toBe(1);
    } finally {
      await api().updateEndpoint(own, { url: listenerUrl });
      await new Promise((resolve) => hop.close(resolve));
    }
  });

  it('works at a narrow 400 px width', async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    // A capture is selected still: there, its detail is a view over the list, which Escape closes.
    await page.locator('body').press('Escape');
    await rows().first().click();
    const overflow = () =>
      page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(await overflow()).toBeLessThanOrEqual(0);
    // The detail is a view of its own there: back to the list for another capture.
    await page.getByRole('button', { name: '← Back to the list' }).click();
    // The service's attempts: each time on one line, not a character per line, and nothing wider than the page.
    await rows().filter({ hasText: 'punch.updated' }).first().click();
    await openTab(page, 'Attempts');
    const times = page.locator('#detail table.attempts td:nth-child(5)');
    await expect.poll(() => times.count()).toBe(3);
    const linesPerTime = await times.evaluateAll((cells) =>
      cells.map((cell) => {
        const range = document.createRange();
        range.selectNodeContents(cell);
        return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
      }),
    );
    expect(linesPerTime).toEqual([1, 1, 1]);
    // The table turns into stacked cards there: each attempt a block, its answer as wide as the card.
    const attempt = page.locator('#detail table.attempts tr:has(td)').first();
    expect(await attempt.evaluate((row) => getComputedStyle(row).display)).toBe('block');
    const answerWidths = await page
      .locator('#detail table.attempts td.answer')
      .evaluateAll((cells) => cells.map((cell) => cell.getBoundingClientRect().width));
    for (const width of answerWidths) expect(width).toBeGreaterThan(250);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await expect.poll(() => page.getByRole('button', { name: 'Replay', exact: true }).isVisible()).toBe(true);
    await page.screenshot({ path: join(await outputDir(), 'inspector-400.png'), fullPage: true });
    await page.keyboard.press('Escape');
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
