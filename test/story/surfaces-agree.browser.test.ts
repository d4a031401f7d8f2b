import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDelivery } from '../../src/testing/index.js';
import { launchChromium } from '../helpers/browser.js';
import { BIN, cleanEnv, runCli, type SpawnedCli, spawnCli } from '../helpers/cli.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';
import { SECRET } from '../helpers/delivery.js';

// A cut answer and a retry, told by the four surfaces that render a capture: listen's line, `captures list`,
// the page (its chart and its row's mark) and the MCP tools. Each renders the story (src/story/): a cut 200
// failed, in the colour of a failure; a retry is "retry 1", in one colour everywhere.
const RED = '\u001b[31m';
const GREY = '\u001b[90m';

let dir: Awaited<ReturnType<typeof tempDir>>;
let app: Receiver;
let listen: SpawnedCli;
let listener: string;
let inspector: string;
let browser: Browser;
/** How many times the app has seen each event id. */
const seen = new Map<string, number>();

beforeAll(async () => {
  dir = await tempDir();
  // The app: cuts its answer to evt_agree_cut short (a 200 promising 100 bytes, then the connection closes);
  // fails evt_agree_retry's first delivery and takes the second.
  app = await startReceiver((request, res) => {
    const id = (JSON.parse(request.body.toString('utf8')) as { id: string }).id;
    seen.set(id, (seen.get(id) ?? 0) + 1);
    if (id === 'evt_agree_cut') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"ok":');
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    res.writeHead(seen.get(id) === 1 ? 500 : 200, { 'content-type': 'application/json' });
    res.end(seen.get(id) === 1 ? '{"error":"not yet"}' : '{"ok":true}');
  });
  const args = ['listen', '--port', '0', '--inspector-port', '0', '--secret', SECRET, '--forward-to', app.url];
  listen = spawnCli([...args, '--no-open'], { cwd: dir.path, env: { FORCE_COLOR: '1' } });
  listener = (await listen.waitForLine((l) => /Listening/.test(l.text ?? ''), 30_000)).text.match(/http\S+/)[0];
  inspector = (await listen.waitForLine((l) => /Inspector/.test(l.text ?? ''))).text.match(/http\S+/)[0];
  const send = (id: string) =>
    sendDelivery(listener, { secret: SECRET, body: { id, object: 'event', type: 'punch.created', created: 1 } });
  await send('evt_agree_cut').catch(() => {}); // the sender sees the connection closed
  await send('evt_agree_retry');
  await send('evt_agree_retry');
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await listen?.stop();
  await app?.close();
  await dir?.remove();
});

/** The line a surface printed for an event's capture: the `n`th (1-based) of them. */
const lineOf = (lines: string[], eventId: string, n = 1) => lines.filter((l) => l.includes(`[${eventId}]`))[n - 1];

describe('the surfaces agree on a cut answer and a retry', () => {
  it("listen's line, captures list, the page and MCP tell both alike", async () => {
    // listen's own line for each delivery (coloured: FORCE_COLOR).
    await expect.poll(() => listen.lines.filter((l) => /evt_agree_/.test(l.text ?? '')).length).toBe(3);
    const live = listen.lines.map((l) => l.text ?? '');
    const listed = (await runCli(['captures', 'list'], { cwd: dir.path, env: { FORCE_COLOR: '1' } })).stdout
      .trim()
      .split('\n')
      .reverse();
    for (const lines of [live, listed]) {
      expect(lineOf(lines, 'evt_agree_cut')).toContain(`${RED}[200 cut]`);
      expect(lineOf(lines, 'evt_agree_retry', 2)).toContain(`${GREY}retry 1`);
      expect(lineOf(lines, 'evt_agree_retry', 1)).not.toMatch(/retry 1/);
    }

    // The page: the chart counts the cut answer as failed, and the retry's mark is "retry 1", plain (grey).
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(inspector);
    const bars = page.locator('#chart g[role="img"]');
    await expect.poll(async () => (await bars.allInnerTexts()).length).toBeGreaterThan(0);
    const counted = await bars.evaluateAll((groups) => groups.map((g) => g.getAttribute('aria-label') ?? ''));
    expect(counted.join(' ')).toMatch(/1 2xx, 2 failed, 0 rejected/);
    await page.getByRole('button', { name: 'By request' }).click();
    const retryMark = page.locator('#captures li.capture .badge', { hasText: 'retry 1' });
    await expect.poll(() => retryMark.count()).toBe(1);
    expect(await retryMark.getAttribute('class')).toBe('badge plain');
    await page.close();

    // MCP: the same words and the same outcome.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: dir.path,
      env: cleanEnv() as Record<string, string>,
    });
    const client = new Client({ name: 'surfaces-agree', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { structuredContent } = (await client.callTool({ name: 'list_captures', arguments: {} })) as unknown as {
        structuredContent: {
          captures: { eventId: string; outcome: string; story: { words: string; status: string } }[];
        };
      };
      const byEvent = (id: string) => structuredContent.captures.filter((c) => c.eventId === id).reverse();
      expect(byEvent('evt_agree_cut')[0]).toMatchObject({ outcome: 'failed', story: { status: '200 cut' } });
      expect(byEvent('evt_agree_retry').map((c) => [c.story.words, c.outcome])).toEqual([
        ['first delivery', 'failed'],
        ['retry 1', '2xx'],
      ]);
    } finally {
      await client.close();
    }
  }, 60_000);
});
