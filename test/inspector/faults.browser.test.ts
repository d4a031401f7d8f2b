import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { postSigned, startListenProcess } from '../helpers/listen.js';
import { startOtlpReceiver } from '../helpers/otlp.js';
import { portForRestarts } from '../helpers/ports.js';
import { tempDir } from '../helpers/sandbox.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

const APP = fileURLToPath(new URL('../fixtures/recording-app.mjs', import.meta.url));
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function startApp(port: number): Promise<ChildProcess> {
  const app = spawn(process.execPath, [APP], { env: { ...process.env, PORT: String(port) } });
  cleanups.push(() => app.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    app.once('exit', () => reject(new Error('the app exited before it was ready')));
    app.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve(app));
  });
}

const delivery = (id: string) => envelopeBody(id, { created: 1 });

describe('the inspector page with faults on purpose, tracing, and an app that restarts', () => {
  it('marks injected faults on the rows, links a trace, and says while the app is not answering', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const port = await portForRestarts();
    const app = await startApp(port);
    const collector = await startOtlpReceiver();
    cleanups.push(() => collector.close());
    const args = ['--secret', SECRET, '--forward-to', String(port), '--faults', 'duplicate=100%', '--faults-seed', '3'];
    args.push('--otlp', collector.url, '--trace-url', 'http://jaeger.test/trace/{traceId}');
    const listen = await startListenProcess(args, dir.path);
    cleanups.push(() => listen.stop('SIGKILL'));
    const browser = await launchChromium();
    cleanups.push(() => browser.close());
    const page = await browser.newPage();
    await page.goto(listen.ready.inspector as string);
    await page.getByRole('button', { name: 'By request' }).click();
    expect((await postSigned(listen.ready.listener, delivery('evt_page_dup'), SECRET)).status).toBe(200);
    await page.locator('#captures .capture', { hasText: /injected: duplicate(?!d)/ }).waitFor();
    await page.locator('#captures .capture', { hasText: 'injected: duplicated' }).waitFor();
    // Its trace, linked where --trace-url says.
    await page.locator('#captures .capture', { hasText: 'injected: duplicated' }).click();
    const link = page.locator('#detail .trace a');
    await link.waitFor();
    const traceId = (await link.textContent()) as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(await link.getAttribute('href')).toBe(`http://jaeger.test/trace/${traceId}`);
    await expect.poll(() => collector.trace(traceId).length).toBeGreaterThanOrEqual(4);

    app.kill('SIGTERM');
    await new Promise((resolve) => app.once('exit', resolve));
    const held = postSigned(listen.ready.listener, delivery('evt_page_held'), SECRET);
    await page.locator('#app-state', { hasText: 'is not answering' }).waitFor({ timeout: 10_000 });
    await startApp(port);
    expect((await held).status).toBe(200);
    await page.locator('#app-state').waitFor({ state: 'hidden', timeout: 10_000 });
  }, 60_000);
});
