// The inspector page in Chromium: a delivery live, replayed and redelivered, Edit & replay, and a reload.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { outputDir } from '../helpers/browser.js';
import { postSigned } from '../helpers/listen.js';
import { answer200 } from '../helpers/receiver.js';
import { envelopeBody } from '../helpers/delivery.js';
import { api, browser, openTab, page, problems, rows, t, usePage } from './page-rig.js';

usePage();

describe('the inspector page in Chromium', () => {
  it('shows a delivery live, replays it, redelivers it, and refuses invalid JSON in Edit & replay', async () => {
    // The first test meets the page as it starts, with the other browser tests starting on the same two
    // cores: once, a poll of 4 s was not enough for it.
    await expect
      .poll(() => page.locator('#endpoint').textContent(), { timeout: 15_000 })
      .toContain(`#${t.session.ready.endpointId}`);
    await expect.poll(() => page.locator('#mode').textContent()).toBe('sandbox');

    const event = await api().request<{ id: string }>('POST', '/sandbox/events', { body: { type: 'punch.created' } });
    await rows().filter({ hasText: event.id }).first().waitFor();
    await expect.poll(() => rows().first().textContent(), { timeout: 15_000 }).toContain('punch.created');
    // Status first, coloured by class; a valid signature is the usual case and gets no mark on the row.
    await expect.poll(() => rows().first().locator('.chip').getAttribute('class')).toBe('chip ok');
    expect(await rows().first().locator('.chip').textContent()).toBe('200');
    expect(await rows().first().textContent()).not.toContain('signature');
    // The listener's usual POST to its path is not repeated on every row: only an unusual one is marked.
    expect(await rows().first().textContent()).not.toContain('POST /');
    await rows().first().click();
    await expect.poll(() => page.locator('#detail h2').textContent()).toContain(event.id);

    // Replay: reaches the app and shows a second capture, marked as a replay.
    const before = t.app.received.length;
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await expect.poll(() => page.locator('#detail .result.ok').textContent()).toContain('the app answered 200');
    expect(t.app.received.length).toBe(before + 1);
    await expect.poll(() => rows().count()).toBe(2);
    await expect.poll(() => rows().first().textContent()).toContain('replay');

    // Redeliver: the service sends the same event id again.
    await rows().nth(1).click();
    await openTab(page, 'Attempts');
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await expect
      .poll(() => page.locator('#detail .result.ok').textContent())
      .toContain('Redelivery queued for 1 endpoint');
    await expect.poll(() => rows().count()).toBe(3);
    // The service's own view of the event shows the redelivery's attempt by itself, once it is complete:
    // the delivery and the redelivery, numbered in order (each is the first attempt of its delivery).
    await openTab(page, 'Attempts');
    const attempts = page.locator('#detail table.attempts tr:has(td)');
    await expect.poll(() => attempts.count()).toBe(2);
    expect(await attempts.locator('td:first-child').allTextContents()).toEqual(['1', '2']);
    await expect.poll(() => rows().filter({ hasText: event.id }).filter({ hasText: 'duplicate' }).count()).toBe(1);
    // The duplicate's detail says so and leads to the first delivery; the replay's leads to what it replayed.
    const original = await rows().filter({ hasText: event.id }).last().getAttribute('data-id');
    await rows().filter({ hasText: 'duplicate' }).click();
    await expect
      .poll(() => page.locator('#detail .duplicate-note').textContent())
      .toMatch(
        /^Duplicate: the service delivered this event before and the app took it \(2xx\), in the capture of .+\. Receivers deduplicate/,
      );
    await page.locator('#detail .duplicate-note button.link').click();
    await expect.poll(() => page.locator('#captures .capture.selected').getAttribute('data-id')).toBe(original);
    await expect.poll(() => page.locator('#detail .duplicate-note').count()).toBe(0);
    await rows().filter({ hasText: 'replay' }).click();
    await page.locator('#detail .muted button.link').click();
    await expect.poll(() => page.locator('#captures .capture.selected').getAttribute('data-id')).toBe(original);

    // Edit & replay: invalid JSON is refused in the page.
    const sent = t.app.received.length;
    await page.getByRole('button', { name: 'Edit & replay' }).click();
    const editor = page.getByLabel('Body to replay');
    await editor.fill('{"id": "evt_x", oops}');
    await expect.poll(() => page.locator('.editor .invalid').textContent()).toContain('Invalid JSON');
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    await editor.fill('{"id": "evt_edited"}');
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).isEnabled()).toBe(true);
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('#detail .result.ok').textContent()).toContain('re-signed');
    expect(t.app.received.length).toBe(sent + 1);
    expect(t.app.received.at(-1)?.body.toString()).toBe('{"id": "evt_edited"}');
    // Its envelope tree counts one key in the singular, the event's its six.
    await expect.poll(() => rows().first().textContent()).toContain('evt_edited');
    await rows().first().click();
    await openTab(page, 'Request');
    await expect.poll(() => page.locator('#detail details > summary').first().textContent()).toBe('{ 1 key }');
    await rows().filter({ hasText: event.id }).last().click();
    await expect.poll(() => page.locator('#detail details > summary').first().textContent()).toBe('{ 6 keys }');

    // Refresh asks the service again: the same two attempts, with what the app answered.
    await rows().filter({ hasText: event.id }).last().click();
    await openTab(page, 'Attempts');
    await page.getByRole('button', { name: 'Refresh attempts' }).click();
    await expect.poll(() => attempts.count()).toBe(2);
    expect(await attempts.locator('td:first-child').allTextContents()).toEqual(['1', '2']);
    expect(await attempts.locator('td:nth-child(3)').allTextContents()).toEqual(['200', '200']);
    expect(await attempts.locator('td.answer').allTextContents()).toEqual(['{"ok":true}', '{"ok":true}']);

    // Nothing stray: every text of the detail pane sits inside an element.
    expect(
      await page.evaluate(
        () =>
          [...(document.querySelector('#detail')?.childNodes ?? [])].filter((n) => n.nodeType === Node.TEXT_NODE)
            .length,
      ),
    ).toBe(0);
    await page.screenshot({ path: join(await outputDir(), 'inspector-1280.png'), fullPage: true });
    expect(problems).toEqual([]);
  }, 30_000);

  it('keeps what was typed in Edit & replay through updates, sending, and another capture shown meanwhile', async () => {
    const secret = t.session.secret as string;
    const body = envelopeBody('evt_draft');
    expect((await postSigned(t.session.ready.listener, body, secret)).status).toBe(200);
    const id = t.session.store.newest(1)[0].id;
    await page.locator(`#captures .capture[data-id="${id}"]`).click();
    await page.getByRole('button', { name: 'Edit & replay' }).click();
    const editor = page.getByLabel('Body to replay');
    await editor.fill('{"id": "evt_draft", "note": "typed"}');
    // The capture changes while someone types (pinned from elsewhere): the text, the focus and the caret stay.
    await editor.press('Control+Home');
    await editor.press('ArrowRight');
    await t.session.store.update(id, { pinned: true });
    await expect.poll(() => page.locator(`#captures .capture[data-id="${id}"]`).textContent()).toContain('pinned');
    await expect.poll(() => page.getByRole('button', { name: 'Unpin' }).count()).toBe(1);
    await page.keyboard.type(' ');
    expect(await editor.inputValue()).toBe('{ "id": "evt_draft", "note": "typed"}');

    // Sent to an app that fails: the editor stays open with the text, to send again once the app is fixed.
    t.app.setResponder((_request, res) => res.writeHead(500).end('boom'));
    try {
      await page.getByRole('button', { name: 'Send' }).click();
      await expect
        .poll(() => page.locator('#detail .result.ok').textContent())
        .toMatch(/^Sent the edited body \(re-signed\): the app answered 500 in \d+ ms\.$/);
      expect(await editor.inputValue()).toBe('{ "id": "evt_draft", "note": "typed"}');
    } finally {
      t.app.setResponder(answer200);
    }
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => t.app.received.at(-1)?.body.toString()).toBe('{ "id": "evt_draft", "note": "typed"}');

    // Another capture shown meanwhile: Edit & replay opens on the text again; Close forgets it.
    expect(
      (await postSigned(t.session.ready.listener, body.replace('evt_draft', 'evt_not_edited'), secret)).status,
    ).toBe(200);
    await page.locator('#captures .capture').filter({ hasText: 'evt_not_edited' }).click();
    await expect.poll(() => editor.count()).toBe(0);
    await page.locator(`#captures .capture[data-id="${id}"]`).click();
    await page.getByRole('button', { name: 'Edit & replay' }).click();
    expect(await editor.inputValue()).toBe('{ "id": "evt_draft", "note": "typed"}');
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => editor.count()).toBe(0);
    await page.getByRole('button', { name: 'Edit & replay' }).click();
    expect(JSON.parse(await editor.inputValue())).toEqual(JSON.parse(body));
    // A long body scrolled down in the editor stays where it was when the capture changes (unpinned, so
    // that Clear, below, takes it too).
    await editor.fill(
      JSON.stringify({ id: 'evt_draft', lines: Array.from({ length: 80 }, (_, i) => `line ${i}`) }, null, 2),
    );
    await editor.evaluate((area) => (area.scrollTop = 300));
    await t.session.store.update(id, { pinned: false });
    await expect.poll(() => page.getByRole('button', { name: 'Pin', exact: true }).count()).toBe(1);
    expect(await editor.evaluate((area) => area.scrollTop)).toBe(300);
    await page.getByRole('button', { name: 'Close' }).click();
    expect(problems).toEqual([]);
  });

  it('keeps its place through a reload: the selected capture, and Edit & replay with what was typed', async () => {
    const secret = t.session.secret as string;
    const body = envelopeBody('evt_reload');
    expect((await postSigned(t.session.ready.listener, body, secret)).status).toBe(200);
    const id = t.session.store.newest(1)[0].id;
    const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await tab.goto(t.session.ready.inspector as string);
      await tab.locator(`#captures .capture[data-id="${id}"]`).click();
      // The address names the capture, token kept: a reload, or the address in another tab, opens it again.
      await expect.poll(() => new URL(tab.url()).hash).toBe(`#${id}`);
      expect(new URL(tab.url()).searchParams.get('token')).toBe(
        new URL(t.session.ready.inspector as string).searchParams.get('token'),
      );
      await tab.getByRole('button', { name: 'Edit & replay' }).click();
      const editor = tab.getByLabel('Body to replay');
      await editor.fill('{"id": "evt_reload", "note": "typed just before the reload"}');
      // At once, before the pause in typing after which the page stores the draft.
      await tab.reload();
      await expect.poll(() => editor.inputValue()).toBe('{"id": "evt_reload", "note": "typed just before the reload"}');
      expect(await tab.locator('#detail h2').textContent()).toContain('evt_reload');
      expect(await tab.locator('#detail .editor p.muted').isHidden()).toBe(true);

      // Closed, it stays closed and forgets the text; another capture selected is the one a reload shows.
      await tab.getByRole('button', { name: 'Close' }).click();
      await tab.reload();
      await expect.poll(() => tab.locator('#detail h2').textContent()).toContain('evt_reload');
      expect(await editor.count()).toBe(0);
      await tab.getByRole('button', { name: 'Edit & replay' }).click();
      expect(JSON.parse(await editor.inputValue())).toEqual(JSON.parse(body));
      await tab.getByRole('button', { name: 'Close' }).click();

      // A draft the browser will not keep for the tab (over its storage) stays until the reload, which is said;
      // the reload then shows the body as it came, not an older draft the tab kept.
      await tab.getByRole('button', { name: 'Edit & replay' }).click();
      await editor.fill('{"id": "evt_reload", "note": "an older draft"}');
      await expect
        .poll(() => tab.evaluate((key) => sessionStorage.getItem(key), `clockhook.draft.${id}`))
        .toBe('{"id": "evt_reload", "note": "an older draft"}');
      // 6 MiB in lines (one line of that length would take the textarea seconds to lay out), made in the page.
      const length = await editor.evaluate((area: HTMLTextAreaElement) => {
        area.value = JSON.stringify(
          { id: 'evt_reload', lines: Array.from({ length: 6 * 1024 }, () => 'x'.repeat(1020)) },
          null,
          2,
        );
        area.dispatchEvent(new Event('input'));
        return area.value.length;
      });
      await expect.poll(() => tab.locator('#detail .editor p.muted').isVisible()).toBe(true);
      expect(await tab.locator('#detail .editor p.muted').textContent()).toBe(
        'The browser would not keep this text for the tab (too large, or site data blocked): a reload of the page would lose it.',
      );
      expect(await editor.evaluate((area: HTMLTextAreaElement) => area.value.length)).toBe(length);
      await tab.reload();
      await expect
        .poll(async () => (await editor.count()) && JSON.parse(await editor.inputValue()))
        .toEqual(JSON.parse(body));
      await tab.getByRole('button', { name: 'Close' }).click();

      // An address naming a capture the page does not hold says so.
      await tab.goto(`${t.session.ready.inspector as string}#cap_000000000000zzzz`);
      const missing =
        "The page's address names cap_000000000000zzzz, which is not among the captures the page holds: it has left the store, or is older (Load older captures, below the list).";
      await expect.poll(() => tab.locator('#detail .empty').textContent()).toBe(missing);
      await tab.reload();
      await expect.poll(() => tab.locator('#detail .empty').textContent()).toBe(missing);
      // Back to a capture the page holds, by the address.
      await tab.goto(`${t.session.ready.inspector as string}#${id}`);
      await expect.poll(() => tab.locator('#detail h2').textContent()).toContain('evt_reload');
    } finally {
      await tab.close();
    }
    expect(problems).toEqual([]);
    // Six reloads of the page, one with a 6 MiB draft: seconds each in Chromium on a busy machine.
  }, 60_000);
});
