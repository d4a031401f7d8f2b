// The inspector page in Chromium: a capture's detail (the app's answer, curl, large bodies), the keys, a ping and a disabled endpoint.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { post, postSigned } from '../helpers/listen.js';
import { answer200 } from '../helpers/receiver.js';
import { envelopeBody } from '../helpers/delivery.js';
import { api, browser, openTab, page, problems, rows, t, usePage } from './page-rig.js';

usePage();

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

describe('the inspector page in Chromium: a capture shown', () => {
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
      await row.locator('.chip.bad', { hasText: '400' }).waitFor();
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
      .filter({ has: page.locator('.chip.ok') })
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
});
