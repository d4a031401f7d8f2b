// npm run docs:screenshots: the README's picture of the inspector, made from the real page in Debian's
// Chromium with real deliveries (a sandbox, listen, an app that fails some of them), so it never goes
// stale by hand. Writes docs/images/inspector.png.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startListen } from '../dist/listen/index.js';

const OUT = fileURLToPath(new URL('../docs/images/inspector.png', import.meta.url));
const TYPES = ['punch.created', 'time_entry.updated', 'employee.created', 'punch.created', 'time_card.approved'];

/** An app that takes most deliveries and fails time cards with a 500, as one being written would. */
async function startApp() {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const type = JSON.parse(Buffer.concat(chunks)).type;
      if (type === 'time_card.approved')
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end('{"error":"TypeError: card.hours is undefined"}');
      else res.writeHead(200).end('ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((r) => server.close(r)) };
}

const dir = await mkdtemp(join(tmpdir(), 'clockhook-shots-'));
const app = await startApp();
const session = await startListen({
  forwardTo: app.url,
  port: 0,
  sandboxPort: 0,
  inspectorPort: 0,
  stateDir: join(dir, '.clockhook'),
});
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  for (const type of TYPES) {
    await session.client.request('POST', '/sandbox/events', { body: { type } });
  }
  while (session.store.all().length < TYPES.length) await new Promise((resolve) => setTimeout(resolve, 50));
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(session.ready.inspector);
  await page.locator('#captures .capture').first().waitFor();
  await page.locator('#captures .capture').first().click();
  await page.waitForTimeout(300); // the detail's attempts are read from the sandbox
  await page.screenshot({ path: OUT });
  console.log(`Written ${OUT}`);
} finally {
  await browser.close();
  await session.close();
  await app.close();
  await rm(dir, { recursive: true, force: true });
}
