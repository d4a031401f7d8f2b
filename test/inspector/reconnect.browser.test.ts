import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ListenSession, startListen } from '../../src/listen/index.js';
import { launchChromium } from '../helpers/browser.js';
import { postSigned, startListenProcess } from '../helpers/listen.js';
import { tempDir } from '../helpers/sandbox.js';
import { portForRestarts } from '../helpers/ports.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** One Chromium for the file, launched by the first test that needs it. */
let launched: ReturnType<typeof launchChromium> | undefined;
function chromium() {
  if (!launched) {
    launched = launchChromium();
    cleanups.unshift(async () => (await launched)?.close());
  }
  return launched;
}

async function deliver(session: ListenSession, id: string, data: Record<string, string> = {}) {
  const body = envelopeBody(id, { type: 'shift.published', data });
  expect((await postSigned(session.ready.listener, body, SECRET)).status).toBe(200);
}

describe('the inspector page across a restart of listen', () => {
  it('reconnects by itself with the same URL and catches up from the snapshot', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const inspectorPort = await portForRestarts();
    const options = { secret: SECRET, port: 0, inspectorPort, stateDir: join(dir.path, '.clockhook') };
    const first = await startListen(options);
    const page = await (await chromium()).newPage();
    await page.goto(first.ready.inspector as string);
    await page.locator('#connection.conn-open').waitFor();
    await deliver(first, 'evt_before_restart');
    await deliver(first, 'evt_large', { pad: 'p'.repeat(40_000), tail: 'END_OF_LARGE' });
    await page.locator('#captures .capture', { hasText: 'evt_before_restart' }).waitFor();
    // Both rows are on the page before listen stops (on a busy machine the second one can still be on its way).
    await page.locator('#captures .capture', { hasText: 'evt_large' }).waitFor();

    await first.close();
    await page.locator('#connection.conn-closed').waitFor();
    // Its whole body cannot be fetched while listen is down; the page says so, and fetches it once back.
    await page.locator('#captures .capture', { hasText: 'evt_large' }).click();
    await page.getByRole('tab', { name: 'Request', exact: true }).click();
    await page.locator('#detail .result.error', { hasText: 'Could not load the whole body' }).waitFor();

    const second = await startListen(options);
    cleanups.push(() => second.close());
    expect(second.ready.inspector).toBe(first.ready.inspector); // same port, same token
    await deliver(second, 'evt_after_restart');
    await page.locator('#connection.conn-open').waitFor({ timeout: 10_000 });
    await page.locator('#captures .capture', { hasText: 'evt_after_restart' }).waitFor();
    // Caught up from the snapshot: history from before the restart is there too, once.
    await expect.poll(() => page.locator('#captures .capture', { hasText: 'evt_before_restart' }).count()).toBe(1);
    await expect.poll(() => page.locator('#detail .json').textContent()).toContain('END_OF_LARGE');
    // Two listens, a browser and up to 5 s of the page's back-off: once, with the other browser tests on the
    // same two cores, all of it took more than 30 s.
  }, 60_000);
});

describe('the inspector page while listen is frozen', () => {
  it('says listen is not answering within about 5 s of a SIGSTOP, and live again after SIGCONT', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const listen = await startListenProcess(['--secret', SECRET], dir.path);
    const pid = listen.child.pid as number;
    cleanups.push(() => listen.stop('SIGKILL'));
    cleanups.push(() => process.kill(pid, 'SIGCONT')); // never left frozen, whatever fails
    const page = await (await chromium()).newPage();
    await page.goto(listen.ready.inspector as string);
    await page.locator('#connection.conn-open').waitFor({ timeout: 15_000 });
    process.kill(pid, 'SIGSTOP');
    const stopped = Date.now();
    // Its socket stays open: only the missing beats can tell.
    await page.locator('#connection.conn-stale', { hasText: 'not answering' }).waitFor({ timeout: 10_000 });
    expect(Date.now() - stopped).toBeLessThan(8_000);
    process.kill(pid, 'SIGCONT');
    await page.locator('#connection.conn-open', { hasText: 'live' }).waitFor({ timeout: 10_000 });
  }, 60_000);
});
