import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ListenSession, startListen } from '../../src/listen/index.js';
import { launchChromium } from '../helpers/browser.js';
import { runCli, type SpawnedCli, spawnCli } from '../helpers/cli.js';
import { portForRestarts } from '../helpers/ports.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';

// A sandbox of its own (retries in milliseconds), listen stopped while an event is triggered and given up,
// then listen again: the page lists the event apart from the captures, and its Redeliver gets it now.
describe("the page's Missed while away", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let app: Receiver;
  let sandbox: SpawnedCli;
  let session: ListenSession;
  let eventId: string;
  const cleanups: (() => unknown)[] = [];
  beforeAll(async () => {
    dir = await tempDir();
    app = await startReceiver();
    sandbox = spawnCli(['sandbox', '--json', '--port', '0', '--time-scale', '0.0001'], { cwd: dir.path });
    await sandbox.waitForLine((line) => line.event === 'ready', 30_000);
    const options = {
      forwardTo: app.url,
      port: await portForRestarts(),
      inspectorPort: 0,
      stateDir: join(dir.path, '.clockhook'),
    };
    await (await startListen(options)).close();
    eventId = JSON.parse((await runCli(['trigger', 'time_card.approved', '--json'], { cwd: dir.path })).stdout).id;
    // Given up: five failed attempts (polled: expect.poll is for tests, not their set-up).
    const attempts = async () =>
      JSON.parse((await runCli(['events', 'get', eventId, '--json'], { cwd: dir.path })).stdout).delivery_attempts
        .length;
    for (const deadline = Date.now() + 20_000; (await attempts()) < 5;) {
      if (Date.now() > deadline) throw new Error(`${eventId} was not given up within 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    session = await startListen(options);
  }, 90_000);
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await session?.close();
    await sandbox?.stop();
    await app?.close();
    await dir?.remove();
  });

  it('lists the missed event with its outlook, and Redeliver brings it to the app', async () => {
    expect((await session.findMissed()).map((m) => m.eventId)).toEqual([eventId]);
    const browser = await launchChromium();
    cleanups.push(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(session.ready.inspector as string);
    const missed = page.getByRole('region', { name: 'Missed while away' });
    await expect.poll(() => missed.textContent()).toContain('Missed while away (1)');
    expect(await missed.textContent()).toContain(
      `time_card.approved ${eventId} · the service gave up after its 5 attempts`,
    );
    await missed.getByRole('button', { name: 'Redeliver 1' }).click();
    await expect.poll(() => app.received.some((r) => r.body.includes(eventId)), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => missed.isHidden()).toBe(true);
    expect(session.store.all().some((c) => c.envelope?.id === eventId)).toBe(true);
  }, 60_000);
});
