// The inspector page in Chromium: the list (replaying it, its toolbar, filters, search) and a deleted endpoint.
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/index.js';
import { signPayload, verifySignature } from '../../src/contract/index.js';
import { startInspectedSession } from '../helpers/inspector.js';
import { post, postSigned } from '../helpers/listen.js';
import { answer200 } from '../helpers/receiver.js';
import { envelopeBody } from '../helpers/delivery.js';
import { api, attemptsFollowRedelivery, browser, openTab, page, problems, rows, t, usePage } from './page-rig.js';

usePage();

describe('the inspector page in Chromium: the list', () => {
  it('replays the captures a narrowed list shows, oldest first, once asked, and can be stopped', async () => {
    const secret = t.session.secret as string;
    const bodies = [1, 2, 3].map((n) => envelopeBody(`evt_bulk_${n}`));
    t.app.setResponder((_request, res) => res.writeHead(500).end('handler broken'));
    const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      // Signed two minutes ago (within the listener's tolerance), so that a replay's signature is seen to be new.
      const signedAt = Math.floor(Date.now() / 1000) - 120;
      for (const body of bodies)
        expect(
          (
            await post(t.session.ready.listener, body, {
              'x-service-signature': signPayload({ payload: body, secret, timestamp: signedAt }),
            })
          ).status,
        ).toBe(500);
      await tab.goto(t.session.ready.inspector as string);
      await tab.getByRole('button', { name: 'By request' }).click();
      await tab.locator('#captures .capture').first().waitFor();
      const bar = tab.locator('#bulk');
      // Not offered on the whole list: one click must not send the whole store again.
      expect(await bar.isHidden()).toBe(true);
      await tab.locator('#search').fill('evt_bulk_');
      await tab.getByRole('button', { name: 'Replay the 3 shown…' }).click();
      expect(await bar.locator('span').textContent()).toBe(
        `Replay these 3 captures to ${t.app.url}/, oldest first, each re-signed?`,
      );
      await tab.getByRole('button', { name: 'Cancel' }).click();
      await tab.getByRole('button', { name: 'Replay the 3 shown…' }).click();

      // The handler fixed: each goes again, in the order the service sent them, with a fresh signature.
      t.app.setResponder(answer200);
      const before = t.app.received.length;
      // Clicked twice before the bar changes: one run all the same.
      await tab.getByRole('button', { name: 'Replay 3' }).dblclick();
      await expect.poll(() => bar.locator('span').textContent()).toBe('Replayed 3 of 3: 3 answered 2xx.');
      const sent = t.app.received.slice(before);
      expect(sent.map((r) => r.body.toString())).toEqual(bodies);
      for (const request of sent) {
        const checked = verifySignature({
          header: request.headers['x-service-signature'] as string,
          payload: request.body,
          secret,
        });
        expect(checked.ok && Math.abs(checked.timestamp - Date.now() / 1000) < 60).toBe(true);
      }
      await tab.getByRole('button', { name: 'OK' }).click();

      // Stopped while the app holds the first answer: nothing after it is sent.
      let answerHeld!: () => void;
      const holding = new Promise<void>((resolve) => {
        t.app.setResponder((request, res, req) => {
          answerHeld = () => answer200(request, res, req);
          resolve();
        });
      });
      const shown = await tab.locator('#captures .capture').count();
      expect(shown).toBe(6); // the three and their replays: the search finds their bodies
      await tab.getByRole('button', { name: `Replay the ${shown} shown…` }).click();
      const sentBefore = t.app.received.length;
      await tab.getByRole('button', { name: `Replay ${shown}` }).click();
      await holding;
      await expect.poll(() => bar.locator('span').textContent()).toBe(`Replaying 1 of ${shown}…`);
      await tab.getByRole('button', { name: 'Stop' }).click();
      await expect.poll(() => tab.getByRole('button', { name: 'Stopping…' }).isDisabled()).toBe(true);
      t.app.setResponder(answer200);
      answerHeld();
      await expect.poll(() => bar.locator('span').textContent()).toBe(`Stopped after 1 of ${shown}: 1 answered 2xx.`);
      expect(t.app.received.length - sentBefore).toBe(1);

      // Back to the whole list: no longer offered.
      await tab.getByRole('button', { name: 'OK' }).click();
      await tab.locator('#search').fill('');
      await expect.poll(() => bar.isHidden()).toBe(true);
    } finally {
      t.app.setResponder(answer200);
      await tab.close();
    }
    expect(problems).toEqual([]);
  });

  it('keeps the toolbar on two rows at 1280 px, no filter clipping its text, whatever the longest event type', async () => {
    // The type filter offers the types seen; a long one once widened it until Clear wrapped, and a fixed
    // width cut the selected text ("Failed forwar", "time_entry.cr").
    await api().request('POST', '/sandbox/events', { body: { type: 'pto_request.cancelled' } });
    await expect.poll(() => page.locator('#type-filter option[value="pto_request.cancelled"]').count()).toBe(1);
    await page.locator('#type-filter').selectOption('pto_request.cancelled');
    await page.locator('#status-filter').selectOption('failed');
    const rowsOf = await page
      .locator('.toolbar > :not(.break)')
      .evaluateAll((elements) => new Set(elements.map((e) => Math.round(e.getBoundingClientRect().top))).size);
    expect(rowsOf).toBe(2);
    // Each select is wider than its selected text plus its arrow.
    const clipped = await page.locator('.toolbar select').evaluateAll((selects) =>
      selects
        .map((select) => {
          const probe = document.createElement('span');
          probe.style.font = getComputedStyle(select).font;
          probe.style.position = 'absolute';
          probe.textContent = (select as HTMLSelectElement).selectedOptions[0].text;
          document.body.append(probe);
          const needed = probe.getBoundingClientRect().width + 20;
          probe.remove();
          return needed > select.getBoundingClientRect().width ? probe.textContent : null;
        })
        .filter(Boolean),
    );
    expect(clipped).toEqual([]);
    await page.locator('#type-filter').selectOption('');
    await page.locator('#status-filter').selectOption('all');
  });

  it('shows the day beside the time of a capture from another day', async () => {
    const body = envelopeBody('evt_today');
    expect((await postSigned(t.session.ready.listener, body, t.session.secret as string)).status).toBe(200);
    await rows().filter({ hasText: 'evt_today' }).waitFor();
    const times = () => rows().locator('.time').allTextContents();
    const today = await times();
    expect(today.length).toBeGreaterThan(0);
    for (const text of today) expect(text).toMatch(/^\d{1,2}:\d{2}:\d{2}/);
    // The same captures seen from tomorrow (a page whose clock is a day ahead).
    const tomorrow = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await tomorrow.clock.install({ time: Date.now() + 86_400_000 });
      await tomorrow.goto(t.session.ready.inspector as string);
      await tomorrow.getByRole('button', { name: 'By request' }).click();
      await tomorrow.locator('#captures .capture').first().waitFor();
      const day = await tomorrow.evaluate(() =>
        new Date(Date.now() - 86_400_000).toLocaleDateString(undefined, { month: 'short', day: 'numeric' }),
      );
      const later = await tomorrow.locator('#captures .capture .time').allTextContents();
      expect(later).toHaveLength(today.length);
      for (const [i, text] of later.entries()) expect(text).toBe(`${day}, ${today[i]}`);
    } finally {
      await tomorrow.close();
    }
  });

  it('calls a second delivery the app never took a retry, not a duplicate', async () => {
    // Sent twice by hand, unsigned: the service is not the one that delivered it before.
    const body = envelopeBody('evt_by_hand');
    // Both refused (400, unsigned): the app took neither, so the second is a retry.
    for (let i = 0; i < 2; i++) expect((await post(t.session.ready.listener, body)).status).toBe(400);
    await expect.poll(() => rows().filter({ hasText: 'evt_by_hand' }).filter({ hasText: 'duplicate' }).count()).toBe(0);
    await rows().filter({ hasText: 'evt_by_hand' }).filter({ hasText: 'retry 1' }).click();
    await expect
      .poll(() => page.locator('#detail .duplicate-note').textContent())
      .toMatch(/^Retry 1: the app did not take the earlier delivery of this event id \(no 2xx\), in the capture of /);
    expect(await rows().filter({ hasText: 'evt_by_hand' }).first().locator('.chip').getAttribute('class')).toBe(
      'chip plain',
    );
    // Sent by hand, unsigned: the service knows no such event, so nothing offers to ask it.
    await openTab(page, 'Attempts');
    await expect.poll(() => page.locator('#detail').textContent()).toContain('Not signed by the service');
    expect(await page.getByRole('button', { name: 'Redeliver' }).count()).toBe(0);
  });

  // Last: Clear empties the list the tests above use.
  it('filters the list by body text, type and outcome, and keeps a pinned capture through Clear', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    const envelope = (id: string, type: string, data: object) => envelopeBody(id, { type, data });
    const secret = t.session.secret as string;
    expect(
      (
        await postSigned(
          t.session.ready.listener,
          envelope('evt_filter_a', 'punch.created', { note: 'Needle-XYZ' }),
          secret,
        )
      ).status,
    ).toBe(200);
    expect(
      (await postSigned(t.session.ready.listener, envelope('evt_filter_b', 'shift.published', {}), secret)).status,
    ).toBe(200);
    expect((await post(t.session.ready.listener, envelope('evt_filter_c', 'shift.published', {}))).status).toBe(400);
    await rows().filter({ hasText: 'evt_filter_c' }).waitFor();
    const shownIds = () =>
      rows().evaluateAll((items) => items.map((item) => item.textContent?.match(/evt_filter_\w/)?.[0] ?? 'other'));

    await page.locator('#search').fill('needle-xyz');
    await expect.poll(shownIds).toEqual(['evt_filter_a']);
    await page.locator('#search').fill('');
    await page.locator('#type-filter').selectOption('shift.published');
    await expect
      .poll(async () => (await shownIds()).filter((id) => id.startsWith('evt_filter')))
      .toEqual(['evt_filter_c', 'evt_filter_b']);
    await expect
      .poll(async () => (await rows().allTextContents()).every((text) => text.includes('shift.published')))
      .toBe(true);
    await page.locator('#status-filter').selectOption('bad-signature');
    await expect.poll(shownIds).toEqual(['evt_filter_c']);
    await page.locator('#type-filter').selectOption('');
    await page.locator('#status-filter').selectOption('all');

    await rows().filter({ hasText: 'evt_filter_a' }).click();
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    await expect.poll(() => rows().filter({ hasText: 'evt_filter_a' }).textContent()).toContain('pinned');
    // Clear asks first, with the count: it sits beside the filters, where a click could be meant for them.
    const unpinned = t.session.store.all().filter((c) => !c.pinned).length;
    await page.locator('#clear').click();
    const bar = page.getByRole('group', { name: 'Clear captures' });
    await expect
      .poll(() => bar.textContent())
      .toBe(
        `Remove the ${unpinned} captures that are not pinned from the store? They cannot be brought back.RemoveCancel`,
      );
    await bar.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => bar.isHidden()).toBe(true);
    expect(t.session.store.all().filter((c) => !c.pinned)).toHaveLength(unpinned);
    await page.locator('#clear').click();
    await bar.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(shownIds).toEqual(['evt_filter_a']);
    expect(t.session.store.all().map((c) => c.envelope?.id)).toEqual(['evt_filter_a']);
    await expect.poll(() => bar.isHidden()).toBe(true);
    // With nothing left to remove, it says so instead.
    await page.locator('#clear').click();
    await expect.poll(() => bar.textContent()).toBe('Nothing to clear: every capture is pinned.OK');
    await bar.getByRole('button', { name: 'OK' }).click();
    expect(problems).toEqual([]);
  });

  it('searches the whole store through the listener: captures the page does not hold, and the tails of large bodies', async () => {
    const envelope = (id: string, data: object) => envelopeBody(id, { data });
    const secret = t.session.secret as string;
    // An event of the service's, soon older than the page's 200 (its attempts are looked at last).
    const event = await api().request<{ id: string }>('POST', '/sandbox/events', { body: { type: 'punch.deleted' } });
    await rows().filter({ hasText: event.id }).waitFor();
    expect(
      (await postSigned(t.session.ready.listener, envelope('evt_search_old', { note: 'needle-old-one' }), secret))
        .status,
    ).toBe(200);
    for (let i = 0; i < 205; i++)
      expect((await postSigned(t.session.ready.listener, envelope(`evt_search_filler_${i}`, {}), secret)).status).toBe(
        200,
      );
    expect(
      (
        await postSigned(
          t.session.ready.listener,
          envelope('evt_search_large', { pad: 'p'.repeat(100_000), tail: 'needle-in-the-tail' }),
          secret,
        )
      ).status,
    ).toBe(200);
    // A page opened now holds the newest 200 captures; the old one is not among them.
    await page.reload();
    await rows().filter({ hasText: 'evt_search_large' }).waitFor();
    expect(await rows().filter({ hasText: 'evt_search_old' }).count()).toBe(0);
    const shownIds = () =>
      rows().evaluateAll((items) =>
        items.map((item) => item.textContent?.match(/evt_search_(old|large|filler_\d+)/)?.[0] ?? 'other'),
      );

    await page.locator('#search').fill('NEEDLE-OLD-ONE');
    await expect.poll(shownIds).toEqual(['evt_search_old']);
    await rows().filter({ hasText: 'evt_search_old' }).click();
    await expect.poll(() => page.locator('#detail').textContent()).toContain('needle-old-one');
    await page.locator('#search').fill('needle-in-the-tail');
    await expect.poll(shownIds).toEqual(['evt_search_large']);
    await page.locator('#search').fill('');
    await expect.poll(async () => (await shownIds()).length).toBe(200);

    // An old capture found and pinned stays in the list; "Load older" still goes on from the 200 loaded.
    await page.locator('#search').fill('needle-old-one');
    await rows().filter({ hasText: 'evt_search_old' }).click();
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    await expect.poll(() => rows().filter({ hasText: 'evt_search_old' }).textContent()).toContain('pinned');
    await page.locator('#search').fill('');
    await expect.poll(async () => (await shownIds()).length).toBe(201);
    await page.locator('#older').click();
    await expect
      .poll(async () => (await shownIds()).filter((id) => id.startsWith('evt_search_filler_')).length)
      .toBe(205);

    // The service's attempts of an event that only the search found follow a new delivery of it, like
    // those of an event in the list: the page counts the deliveries it holds through the search too.
    await page.reload();
    await rows().filter({ hasText: 'evt_search_large' }).waitFor();
    expect(await rows().filter({ hasText: event.id }).count()).toBe(0);
    await page.locator('#search').fill(event.id);
    await rows().filter({ hasText: event.id }).click();
    await attemptsFollowRedelivery(event.id);
    expect(problems).toEqual([]);
  });
});

describe('the page of a listen whose endpoint was deleted meanwhile', () => {
  it('says so, with what to do, and offers neither Re-enable nor Ping', async () => {
    const own = await startInspectedSession();
    const ownPage = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      const id = own.session.ready.endpointId as number;
      await (own.session.client as ApiClient).deleteEndpoint(id);
      const body = envelopeBody('evt_after_delete');
      expect((await postSigned(own.session.ready.listener, body, own.session.secret as string)).status).toBe(200);
      // The page reads the endpoint again when it connects.
      await ownPage.goto(own.session.ready.inspector as string);
      await expect
        .poll(() => ownPage.locator('#banner-text').textContent())
        .toBe(
          `Endpoint #${id} was deleted: the service sends nothing here any more. Restart clockhook listen to register a new one (its secret is new).`,
        );
      expect(await ownPage.locator('#banner').getByRole('button', { name: 'Re-enable endpoint' }).isHidden()).toBe(
        true,
      );
      expect(await ownPage.locator('#endpoint .badge').textContent()).toBe('deleted');
      await ownPage.locator('#captures .capture', { hasText: 'evt_after_delete' }).click();
      const ping = ownPage.getByRole('button', { name: 'Ping endpoint' });
      expect(await ping.isDisabled()).toBe(true);
      expect(await ping.getAttribute('title')).toBe(`Endpoint #${id} was deleted: there is nothing to ping.`);
      expect(await ownPage.getByRole('button', { name: 'Re-enable endpoint' }).count()).toBe(0);
    } finally {
      await ownPage.close();
      await own.close();
    }
  });
});
