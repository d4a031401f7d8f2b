import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ListenSession, startListen } from '../../src/listen/index.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { recordingLogger } from '../helpers/logger.js';
import { portForRestarts } from '../helpers/ports.js';
import { tempDir } from '../helpers/sandbox.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('listen using a sandbox it did not start (clockhook sandbox in another terminal)', () => {
  it('says when that sandbox stops, when it is back, and when one runs again elsewhere, once each', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const stateDir = join(dir.path, '.clockhook');
    const port = await portForRestarts();
    const sandboxAt = (p: number) =>
      startSandbox({
        port: p,
        dbPath: join(stateDir, 'sandbox-db.json'),
        discoveryPath: join(stateDir, 'sandbox.json'),
      });
    let sandbox: Sandbox = await sandboxAt(port);
    cleanups.push(() => sandbox.close());
    const logger = recordingLogger();
    const session: ListenSession = await startListen({
      port: 0,
      inspector: false,
      stateDir,
      logger,
      sandboxWatchMs: 50,
    });
    cleanups.push(() => session.close());
    const warned = (text: string) => logger.warnings.filter((line) => line.includes(text));
    const told = (text: string) => logger.infos.filter((line) => line.includes(text));

    await sandbox.close();
    const stopped = `The sandbox at http://127.0.0.1:${port} (pid ${process.pid}) has stopped: no deliveries come, and the inspector's Redeliver and Ping fail, until it runs again. Start it again in this folder: npx clockhook sandbox --port ${port}`;
    await expect.poll(() => warned('has stopped')).toEqual([stopped]);

    sandbox = await sandboxAt(port);
    await expect
      .poll(() => told('is back'))
      .toEqual([`The sandbox at http://127.0.0.1:${port} is back: deliveries come again.`]);
    await new Promise((resolve) => setTimeout(resolve, 200)); // a few more checks: nothing more to say
    expect(warned('has stopped')).toHaveLength(1);

    // Started again on another port: this listen cannot follow it, and says so once.
    await sandbox.close();
    sandbox = await sandboxAt(0);
    const elsewhere = `A sandbox runs in this folder again, at ${sandbox.apiBase}, but this listen talks to the one at http://127.0.0.1:${port}: restart listen to use the new one.`;
    await expect.poll(() => warned('runs in this folder again')).toEqual([elsewhere]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(warned('runs in this folder again')).toHaveLength(1);
    expect(warned('has stopped')).toHaveLength(2);
  });
});
