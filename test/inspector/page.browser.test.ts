import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page, WebSocket } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/index.js';
import { signPayload, verifySignature } from '../../src/contract/index.js';
import { launchChromium, outputDir } from '../helpers/browser.js';
import { startInspectedSession } from '../helpers/inspector.js';
import { post, postSigned } from '../helpers/listen.js';
import { answer200 } from '../helpers/receiver.js';
import { envelopeBody } from '../helpers/delivery.js';

let t: Awaited<ReturnType<typeof startInspectedSession>>;
let browser: Browser;
let page: Page;
const problems: string[] = [];

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

const api = () => t.session.client as ApiClient;

/** Opens a tab of the detail (the page keeps the open tab from one capture to the next). */
const openTab = (on: Page, name: string) => on.getByRole('tab', { name, exact: true }).click();

/**
 * What curl would send for `command`, as a POSIX shell reads it: a shell function stands in for curl
 * (which a clean machine may lack) and writes down its arguments and standard input.
 */
function runInShell(command: string): { url: string; headers: Record<string, string>; body: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'clockhook-curl-'));
  try {
    const env = { ...process.env, ARGS: join(dir, 'args'), STDIN: join(dir, 'stdin') };
    execFileSync('sh', ['-c', `curl() { printf '%s\\0' "$@" > "$ARGS"; cat > "$STDIN"; }\n${command}\n`], {
      env,
      input: '',
    });
    const args = readFileSync(env.ARGS, 'utf8').split('\0').slice(0, -1);
    expect(args.slice(0, 2)).toEqual(['-X', 'POST']);
    const headers: Record<string, string> = {};
    let body = Buffer.alloc(0);
    for (let i = 3; i < args.length; i += 2) {
      if (args[i] === '-H')
        headers[args[i + 1].slice(0, args[i + 1].indexOf(':'))] = args[i + 1].slice(args[i + 1].indexOf(':') + 2);
      else if (args[i] === '--data-binary')
        body = args[i + 1] === '@-' ? readFileSync(env.STDIN) : Buffer.from(args[i + 1]);
      else throw new Error(`unexpected curl argument ${args[i]}`);
    }
    return { url: args[2], headers, body };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const rows = () => page.locator('#captures .capture');

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
    await expect.poll(() => rows().first().locator('.chip').getAttribute('class')).toBe('chip chip-2xx');
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

  it("updates the shown event's attempts by itself when the service delivers it again", async () => {
    const event = await api().request<{ id: string }>('POST', '/sandbox/events', { body: { type: 'punch.updated' } });
    await rows().filter({ hasText: event.id }).first().click();
    await openTab(page, 'Attempts');
    const attempts = page.locator('#detail table.attempts tr:has(td)');
    await expect.poll(() => attempts.count()).toBe(1);
    // Redelivered by someone else (the CLI, a teammate): the new capture tells the page to ask again.
    await api().redeliverEvent(event.id);
    await expect.poll(() => rows().filter({ hasText: event.id }).count()).toBe(2);
    await expect.poll(() => attempts.count()).toBe(2);
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
      await row.locator('.chip-2xx', { hasText: '200' }).waitFor();
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

  it('says at the top what the app answered when it did not take a delivery, and leads to its response', async () => {
    t.app.setResponder((_request, res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"error":"No signatures found matching the expected signature"}'),
    );
    try {
      const eventId = (
        await api().request<{ id: string }>('POST', '/sandbox/events', { body: { type: 'location.updated' } })
      ).id;
      const row = rows().filter({ hasText: eventId }).first();
      await row.locator('.chip-4xx', { hasText: '400' }).waitFor();
      await row.click();
      const note = page.locator('#detail .answer-note');
      await expect
        .poll(() => note.textContent())
        .toMatch(
          /^The app answered 400 in \d+ ms: No signatures found matching the expected signature\. See its response$/,
        );
      // Below the request at first, in view once asked for.
      const inView = () =>
        page.evaluate(() => {
          const top = document.querySelector('#app-response')?.getBoundingClientRect().top ?? -1;
          return top >= 0 && top < window.innerHeight;
        });
      expect(await inView()).toBe(false);
      await note.getByRole('button', { name: 'See its response' }).click();
      await expect.poll(inView).toBe(true);
      // Under the service's attempts: when it tries again (the embedded sandbox keeps the contract's 1 minute).
      await openTab(page, 'Attempts');
      const outlook = page.locator('#detail .outlook');
      await expect
        .poll(() => outlook.textContent(), { timeout: 10_000 })
        .toMatch(
          /^Endpoint \d+: attempt 2 of 5 is due at about .+, 1 min after attempt 1 \(the service's retry policy\)\. Redeliver sends the event again now\.$/,
        );
      const [attempt] = (await api().getEvent(eventId)).delivery_attempts;
      const due = new Date(Date.parse(attempt.createdAt) + 60_000);
      expect(await outlook.textContent()).toContain(
        await page.evaluate((ms) => new Date(ms).toLocaleTimeString(), due.getTime()),
      );
      // Once that time has passed the page says so by itself (a page whose clock the test moves on).
      const later = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      try {
        await later.clock.install();
        await later.goto(t.session.ready.inspector as string);
        await later.locator('#captures .capture').filter({ hasText: eventId }).click();
        await openTab(later, 'Attempts');
        const shown = later.locator('#detail .outlook');
        await expect.poll(() => shown.textContent()).toContain('is due at about');
        await later.clock.fastForward(due.getTime() - Date.now() + 1_000);
        await expect
          .poll(() => shown.textContent())
          .toMatch(
            /^Endpoint \d+: attempt 2 of 5 was due at about .+, 1 min after attempt 1 \(the service's retry policy\); it shows here once it completes\.$/,
          );
      } finally {
        await later.close();
      }
    } finally {
      t.app.setResponder(answer200);
    }
    // A delivery the app took has no such note.
    const taken = (
      await api().request<{ id: string }>('POST', '/sandbox/events', { body: { type: 'location.updated' } })
    ).id;
    await rows()
      .filter({ hasText: taken })
      .filter({ has: page.locator('.chip-2xx') })
      .click();
    await expect.poll(() => page.locator('#detail h2').textContent()).toContain(taken);
    expect(await page.locator('#detail .answer-note').count()).toBe(0);
  });

  it('copies a capture as a curl command that sends the same bytes and headers again, and says how long its signature holds', async () => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: new URL(t.session.ready.inspector as string).origin,
    });
    const secret = t.session.secret as string;
    const text = envelopeBody('evt_curl_text', { data: { note: 'it\'s Zoë\'s $HOME `x` \\ "q"' } });
    const bytes = Buffer.concat([
      Buffer.from('{"id":"evt_curl_bytes","note":"'),
      Buffer.from([0xff, 0x00, 0x27, 0x0a]),
      Buffer.from('"}'),
    ]);
    for (const body of [text, bytes]) {
      expect((await postSigned(t.session.ready.listener, body, secret, { 'x-extra': "a 'quoted' value" })).status).toBe(
        200,
      );
      // Answered, so captured: the newest capture (the bytes are no envelope, so no row shows an id).
      await page.locator(`#captures .capture[data-id="${t.session.store.newest(1)[0].id}"]`).click();
      await page.getByRole('button', { name: 'Copy as curl' }).click();
      await expect
        .poll(() => page.locator('#detail .result.ok').textContent())
        .toContain('with its original signature');
      const command = await page.evaluate(() => navigator.clipboard.readText());
      const sent = runInShell(command);
      const before = t.app.received.length;
      expect((await post(sent.url, sent.body, sent.headers)).status).toBe(200);
      const got = t.app.received[before];
      expect(got.body.equals(Buffer.from(body))).toBe(true);
      expect(got.headers['x-service-signature']).toBe(t.app.received[before - 1].headers['x-service-signature']);
      expect(got.headers['x-extra']).toBe("a 'quoted' value");
    }
  });

  it('shows the curl command to copy by hand in a browser without a clipboard for the page', async () => {
    // A browser that gives the page no Clipboard API (an older one, or one where it is turned off).
    const bare = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await bare.addInitScript(() => Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined }));
      await bare.goto(t.session.ready.inspector as string);
      const body = envelopeBody('evt_curl_by_hand', { data: { note: "Zoë's" } });
      expect((await postSigned(t.session.ready.listener, body, t.session.secret as string)).status).toBe(200);
      await bare.locator('#captures .capture').filter({ hasText: 'evt_curl_by_hand' }).click();
      await bare.getByRole('button', { name: 'Copy as curl' }).click();
      const shown = bare.locator('#detail .result.ok');
      await expect
        .poll(() => shown.textContent())
        .toContain('This curl command sends the request to the listener again, with its original signature');
      const sent = runInShell(await shown.locator('textarea').inputValue());
      const before = t.app.received.length;
      expect((await post(sent.url, sent.body, sent.headers)).status).toBe(200);
      expect(t.app.received[before].body.toString()).toBe(body);
    } finally {
      await bare.close();
    }
  });

  it('moves with the arrow keys, replays with r, and goes to the search box with /', async () => {
    // By its id: a capture arriving meanwhile (a sandbox retry of an earlier test's delivery) goes on
    // top, where a click on "the first row" could land; and the page marks the selection a frame later.
    const first = (await rows().first().getAttribute('data-id')) as string;
    const selectedId = () => page.locator('#captures .capture.selected').getAttribute('data-id');
    await page.locator(`#captures .capture[data-id="${first}"]`).click();
    await expect.poll(selectedId).toBe(first);
    await page.keyboard.press('ArrowDown');
    await expect.poll(selectedId).not.toBe(first);
    await page.keyboard.press('ArrowUp');
    await expect.poll(selectedId).toBe(first);
    const before = t.app.received.length;
    await page.keyboard.press('r');
    await expect.poll(() => page.locator('#detail .result.ok').textContent()).toContain('Replayed');
    expect(t.app.received.length).toBe(before + 1);
    // / goes to the search box, and is not typed into it; in the box, keys are text.
    await page.keyboard.press('/');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('search');
    await page.keyboard.type('r/');
    expect(await page.locator('#search').inputValue()).toBe('r/');
    expect(t.app.received.length).toBe(before + 1);
    await page.locator('#search').fill('');
    await page.locator('#search').blur();
  });

  it('shows a ping that cannot be redelivered, offering a new ping', async () => {
    await page.getByRole('button', { name: 'Ping endpoint' }).click();
    await rows().filter({ hasText: 'webhook_endpoint.ping' }).first().waitFor();
    await rows().filter({ hasText: 'webhook_endpoint.ping' }).first().click();
    await openTab(page, 'Attempts');
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await expect.poll(() => page.locator('#detail .result.error').textContent()).toContain('cannot be redelivered');
    await expect.poll(() => page.getByRole('button', { name: 'Send a new ping' }).isVisible()).toBe(true);
  });

  it('shows a disabled endpoint and re-enables it', async () => {
    await api().updateEndpoint(t.session.ready.endpointId as number, { status: 'disabled' });
    await page.reload();
    await expect.poll(() => page.locator('#banner').isVisible()).toBe(true);
    await page.locator('#banner').getByRole('button', { name: 'Re-enable endpoint' }).click();
    await expect.poll(() => page.locator('#banner').isHidden()).toBe(true);
    expect((await api().getEndpoint(t.session.ready.endpointId as number)).status).toBe('enabled');
  });

  it('fetches the whole of a large body when its capture is selected, and says so when it cannot be had', async () => {
    const deliver = async (id: string) => {
      const body = envelopeBody(id, { data: { pad: 'p'.repeat(100_000), tail: `END_OF_${id}` } });
      const res = await postSigned(t.session.ready.listener, body, t.session.secret as string);
      expect(res.status).toBe(200);
      await rows().filter({ hasText: id }).first().waitFor();
      return { body, captureId: t.session.store.all().find((c) => c.envelope?.id === id)?.id as string };
    };
    const large = await deliver('evt_large_body');
    await rows().filter({ hasText: 'evt_large_body' }).click();
    // The page got only the first 16 KiB with the capture; the envelope's end is in the rest.
    await openTab(page, 'Request');
    await expect.poll(() => page.locator('#detail .json').textContent()).toContain('END_OF_evt_large_body');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download JSON' }).click(),
    ]);
    const saved = JSON.parse(await readFile(await download.path(), 'utf8'));
    expect(saved).toMatchObject({ id: large.captureId, body: large.body });
    expect(saved.bodyFile).toBeUndefined();

    const lost = await deliver('evt_lost_body');
    await rm(join(t.dir, '.clockhook', 'captures.json.bodies', lost.captureId));
    await rows().filter({ hasText: 'evt_lost_body' }).click();
    await expect
      .poll(() =>
        page.locator('#detail .result.error').filter({ hasText: 'Could not load the whole body' }).textContent(),
      )
      .toContain(`The body of ${lost.captureId} was kept in captures.json.bodies/${lost.captureId}`);
    expect(await page.getByRole('button', { name: 'Edit & replay' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Download JSON' }).isDisabled()).toBe(true);
    await openTab(page, 'Request');
    await expect.poll(() => page.locator('#detail pre').first().textContent()).toContain('"id":"evt_lost_body"');
    expect(problems).toEqual([]);
  });

  it('says when a body over the limit was cut', async () => {
    const body = envelopeBody('evt_over_limit', { data: { pad: 'p'.repeat(6 * 1024 * 1024) } });
    const before = await rows().count();
    const res = await postSigned(t.session.ready.listener, body, t.session.secret as string);
    expect(res.status).toBe(413);
    // Its envelope is cut too, so the row shows the request, not the event id: it is the newest.
    await expect.poll(() => rows().count()).toBe(before + 1);
    await rows().first().click();
    await expect
      .poll(() => page.locator('#detail').textContent())
      .toContain(
        `The body was ${body.length} bytes, over the listener's limit: only its beginning was captured, and the sender was answered 413.`,
      );
    expect(problems).toEqual([]);
  });

  it("says when it shows only the first 16 KiB of the app's answer", async () => {
    const page500 = `<h1>NoMethodError in WebhooksController</h1>${'<p>frame</p>'.repeat(4000)}`;
    t.app.setResponder((_r, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end(page500);
    });
    try {
      const body = envelopeBody('evt_big_answer');
      const res = await postSigned(t.session.ready.listener, body, t.session.secret as string);
      expect(res.status).toBe(500);
      await rows().filter({ hasText: 'evt_big_answer' }).first().click();
      await openTab(page, 'Response');
      await expect
        .poll(() => page.locator('#detail').textContent())
        .toContain(`The answer was ${page500.length} bytes; clockhook keeps its first 16 KiB.`);
      await expect.poll(() => page.locator('#detail pre').filter({ hasText: 'NoMethodError' }).count()).toBe(1);
      // In HTTP's order: the answer's headers, then its body.
      expect(await page.locator('#detail h4').allTextContents()).toEqual(['Headers', 'Body']);
      expect(await page.locator('#detail h4 + table').textContent()).toContain('text/html');

      // No answer at all: no headers or body to show, only the error.
      t.app.setResponder((_r, res) => res.socket?.destroy());
      await postSigned(
        t.session.ready.listener,
        body.replace('evt_big_answer', 'evt_no_answer'),
        t.session.secret as string,
      );
      await rows().filter({ hasText: 'evt_no_answer' }).first().click();
      await expect
        .poll(() => page.locator('#detail').textContent())
        .toContain('the app closed the connection without answering');
      expect(await page.locator('#detail h4').count()).toBe(0);
    } finally {
      t.app.setResponder(answer200);
    }
    expect(problems).toEqual([]);
  });

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
      'chip chip-refused',
    );
    // Sent by hand, unsigned: the service knows no such event, so nothing offers to ask it.
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
    await openTab(page, 'Attempts');
    const attempts = page.locator('#detail table.attempts tr:has(td)');
    await expect.poll(() => attempts.count()).toBe(1);
    await api().redeliverEvent(event.id);
    await expect.poll(() => rows().filter({ hasText: event.id }).count()).toBe(2);
    await expect.poll(() => attempts.count()).toBe(2);
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
