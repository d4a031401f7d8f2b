import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/index.js';
import { outputDir } from '../helpers/browser.js';
import { type Firefox, launchFirefox } from '../helpers/firefox.js';
import { startInspectedSession } from '../helpers/inspector.js';

// The page is tested in depth in Chromium (the page*.browser.test.ts files); this is its live way in Firefox:
// the WebSocket with its token and Origin, live captures and their updates, and a control call.
describe('the inspector page in Firefox', () => {
  let t: Awaited<ReturnType<typeof startInspectedSession>>;
  let firefox: Firefox;

  beforeAll(async () => {
    t = await startInspectedSession();
    firefox = await launchFirefox();
  }, 60_000);

  afterAll(async () => {
    await firefox?.close();
    await t?.close();
  });

  /** What `expression` gives in the page, once `done` holds for it (checked every 50 ms for up to 10 s). */
  async function until(expression: string, done: (value: string) => boolean): Promise<string> {
    let value = '';
    for (
      const started = Date.now();
      Date.now() - started < 10_000;
      await new Promise((resolve) => setTimeout(resolve, 50))
    ) {
      value = await firefox.evaluate(expression);
      if (done(value)) return value;
    }
    throw new Error(`${expression} is still ${JSON.stringify(value)}`);
  }
  const text = (selector: string) => `document.querySelector(${JSON.stringify(selector)})?.textContent ?? ''`;
  const click = (selector: string, label: string) =>
    firefox.evaluate(
      `[...document.querySelectorAll(${JSON.stringify(selector)})].find((b) => b.textContent.trim() === ${JSON.stringify(label)}).click() ?? ''`,
    );

  it('shows the captures live over the WebSocket, and replays one', async () => {
    await firefox.navigate(t.session.ready.inspector as string);
    await until(`document.querySelector('#connection').className`, (value) => value.includes('conn-open'));
    await until(text('#mode'), (value) => value === 'sandbox');

    // A delivery from the sandbox appears live, and then its forward result.
    const event = await (t.session.client as ApiClient).request<{ id: string }>('POST', '/sandbox/events', {
      body: { type: 'punch.created' },
    });
    const row = await until(text('#captures .capture'), (value) => value.includes(event.id) && value.includes('200'));
    expect(row).toContain('punch.created');
    expect(row).not.toContain('signature');

    await firefox.evaluate(`document.querySelector('#captures .capture').click() ?? ''`);
    await until(text('#detail h2'), (value) => value.includes(event.id));
    const before = t.app.received.length;
    await click('#detail button', 'Replay');
    await until(text('#detail .result.ok'), (value) => value.includes('the app answered 200'));
    expect(t.app.received.length).toBe(before + 1);
    // By event (the default), one row for the event and its replay; by request, one each.
    await until(text('#captures .capture'), (value) => value.includes('2 deliveries'));
    expect(await firefox.evaluate(`String(document.querySelectorAll('#captures .capture').length)`)).toBe('1');
    await click('#view button', 'By request');
    await until(`String(document.querySelectorAll('#captures .capture').length)`, (value) => value === '2');
    expect(await firefox.evaluate(text('#captures .capture'))).toContain('replay');

    expect(firefox.errors).toEqual([]);
  }, 30_000);

  it('fits a narrow 400 px width', async () => {
    await firefox.setViewport(400, 800);
    await firefox.evaluate(`document.querySelector('#captures .capture').click() ?? ''`);
    const overflow = await firefox.evaluate(
      'String(document.documentElement.scrollWidth - document.documentElement.clientWidth)',
    );
    expect(Number(overflow)).toBeLessThanOrEqual(0);
    // The actions are there to be pressed, inside the page's width.
    const replay = await firefox.evaluate(
      `JSON.stringify([...document.querySelectorAll('#detail button')].find((b) => b.textContent.trim() === 'Replay').getBoundingClientRect())`,
    );
    const box = JSON.parse(replay) as { left: number; right: number; width: number };
    expect(box.width).toBeGreaterThan(0);
    expect(box.left).toBeGreaterThanOrEqual(0);
    expect(box.right).toBeLessThanOrEqual(400);
    await writeFile(join(await outputDir(), 'inspector-firefox-400.png'), await firefox.screenshot());
    expect(firefox.errors).toEqual([]);
  });
});
