import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, outputDir } from '../helpers/browser.js';
import { startInspectedSession } from '../helpers/inspector.js';
import { postSigned } from '../helpers/listen.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

let t: Awaited<ReturnType<typeof startInspectedSession>>;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

const XSS = [
  '<script>window.__pwned = "script"</script>',
  '<img src=x onerror="window.__pwned = \'img\'">',
  'javascript:window.__pwned="link"',
  '"><svg onload="window.__pwned=\'svg\'">',
];

function envelope(id: string, data: unknown): string {
  return envelopeBody(id, { data });
}

async function deliver(body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await postSigned(t.session.ready.listener, body, SECRET, headers);
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  t = await startInspectedSession({ secret: SECRET, forwardTo: null });
  await deliver(envelope('evt_plain', { note: 'a plain, harmless capture' }));
  await deliver(envelope('evt_xss', { note: XSS[0], photo: XSS[1], link: XSS[2], [XSS[3]]: XSS }), {
    'x-note': XSS[1],
    'x-link': XSS[2],
  });
  await deliver(envelope('evt_huge', { line: 'A'.repeat(1024 * 1024) }));
  await deliver(
    `{"id":"evt_deep","object":"event","type":"punch.created","api_version":"2026-11-01","created":1790000000,"data":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
  );
  await deliver(
    Buffer.concat([
      Buffer.from('{"id":"evt_bytes","note":"'),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
      Buffer.from('"}'),
    ]),
  );
  await deliver(
    '{"id":"evt_proto","object":"event","type":"punch.created","api_version":"2026-11-01","created":1790000000,"data":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted2":"yes"}}}}',
  );

  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(t.session.ready.inspector as string);
  // One row per capture, and the request's tab, where the payloads are shown.
  await page.getByRole('button', { name: 'By request' }).click();
  await page.locator('#captures .capture').nth(5).waitFor();
  await page.locator('#captures .capture').first().click();
  await page.getByRole('tab', { name: 'Request', exact: true }).click();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const row = (eventId: string) => page.locator('#captures .capture').filter({ hasText: eventId });

describe('hostile payloads in the inspector page', () => {
  it('runs no script from payloads or headers, whatever capture is shown', async () => {
    for (const id of ['evt_xss', 'evt_proto', 'evt_bytes', 'evt_plain']) {
      await row(id).click();
      await expect.poll(() => page.locator('#detail h2').textContent()).toContain(id);
    }
    await row('evt_xss').click();
    await expect.poll(() => page.locator('#detail').textContent()).toContain('<script>window.__pwned');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(await page.locator('#detail script, #detail img, #detail svg, #captures img').count()).toBe(0);
  });

  it('forbids inline script by CSP, even if markup got in', async () => {
    const ran = await page.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = 'window.__inline = true';
      document.body.append(script);
      return (window as unknown as { __inline?: boolean }).__inline;
    });
    expect(ran).toBeUndefined();
  });

  it('stays responsive with a 1 MB line and 10,000 levels of nesting', async () => {
    for (const id of ['evt_huge', 'evt_deep']) {
      const started = Date.now();
      await row(id).click();
      await expect.poll(() => page.locator('#detail h2').textContent()).toContain(id);
      expect(await page.evaluate(() => 1 + 1)).toBe(2);
      expect(Date.now() - started).toBeLessThan(3000);
    }
    await row('evt_huge').click();
    await page.getByRole('button', { name: /Show all \d+ characters/ }).click();
    await page.locator('#search').fill('AAAA');
    await expect.poll(() => page.locator('#captures .capture').count()).toBe(1);
    await page.locator('#search').fill('');
    expect(pageErrors).toEqual([]);
  });

  it("lets nothing leak between captures or into the page's objects", async () => {
    await row('evt_proto').click();
    await expect.poll(() => page.locator('#detail .json').textContent()).toContain('__proto__');
    expect(await page.evaluate(() => ({}) as Record<string, unknown>)).toEqual({});
    expect(
      await page.evaluate(() => [({} as Record<string, unknown>).polluted, ({} as Record<string, unknown>).polluted2]),
    ).toEqual([undefined, undefined]);
    await row('evt_plain').click();
    await expect.poll(() => page.locator('#detail h2').textContent()).toContain('evt_plain');
    const detail = await page.locator('#detail').textContent();
    expect(detail).toContain('a plain, harmless capture');
    for (const marker of ['__pwned', 'polluted', 'AAAAAAAA']) expect(detail).not.toContain(marker);
    await page.screenshot({ path: join(await outputDir(), 'hostile.png') });
  });
});

describe('actions an offline listener without an app cannot offer', () => {
  it('says on each why it is not offered', async () => {
    await row('evt_plain').click();
    const disabled = (where: string) =>
      page
        .locator(`${where} button:disabled`)
        .evaluateAll((buttons) => buttons.map((b) => [b.textContent, b.getAttribute('title')]));
    const noApp = 'No app to replay to: listen runs in capture-only mode. Start it with --forward-to <your app>.';
    const offline = 'Offline (--secret without an API key): there is no service to ask.';
    // The capture's, the endpoint's in the header, and the event's in the Attempts tab.
    expect(await disabled('#detail [aria-label="This capture"]')).toEqual([
      ['Replay', noApp],
      ['Replay as-is', noApp],
      ['Edit & replay', noApp],
    ]);
    expect(await disabled('#endpoint-actions')).toEqual([['Ping endpoint', offline]]);
    await page.getByRole('tab', { name: 'Attempts', exact: true }).click();
    await expect
      .poll(() => disabled('#detail [aria-label="This event"]'))
      .toEqual([
        ['Redeliver', offline],
        ['Refresh attempts', offline],
      ]);
  });
});
