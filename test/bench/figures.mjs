// The other figures of `npm run bench`: start-up and the page's snapshot on a full store, memory after many
// deliveries, the testing library's sandbox, and the page in Chromium on a 10,000-capture store.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { procStatus } from '../helpers/clockhook-process.mjs';
import { figures, load, mib, settle } from './load.mjs';
import { connectInspector, folder, spawnClockhook } from './subjects.mjs';
import { fullStore, SECRET } from './traffic.mjs';

export const MEMORY_DELIVERIES = Number(process.env.BENCH_MEMORY_DELIVERIES ?? 100_000);

export async function startupWithFullStore(app) {
  const dir = await folder();
  await fullStore(dir, 10_000);
  const started = performance.now();
  const listenProc = spawnClockhook(
    [
      'listen',
      '--json',
      '--port',
      '0',
      '--inspector-port',
      '0',
      '--secret',
      SECRET,
      '--forward-to',
      app.url,
      '--max-captures',
      '10000',
      '--no-open',
    ],
    dir,
  );
  await listenProc.ready;
  const ms = Math.round(performance.now() - started);
  await listenProc.stop();
  await rm(dir, { recursive: true, force: true });
  return ms;
}

export async function snapshotOf1000(app) {
  const dir = await folder();
  await fullStore(dir, 1000);
  const listenProc = spawnClockhook(
    [
      'listen',
      '--json',
      '--port',
      '0',
      '--inspector-port',
      '0',
      '--secret',
      SECRET,
      '--forward-to',
      app.url,
      '--no-open',
    ],
    dir,
  );
  const ready = await listenProc.ready;
  const times = [];
  for (let i = 0; i < 5; i++) {
    const inspector = await connectInspector(ready.inspector);
    times.push(await inspector.snapshotMs());
    inspector.socket.close();
  }
  await listenProc.stop();
  await rm(dir, { recursive: true, force: true });
  return Math.round(Math.max(...times));
}

export async function memoryAfter(app) {
  const dir = await folder();
  const listenProc = spawnClockhook(
    [
      'listen',
      '--json',
      '--port',
      '0',
      '--inspector-port',
      '0',
      '--secret',
      SECRET,
      '--forward-to',
      app.url,
      '--no-open',
    ],
    dir,
  );
  const ready = await listenProc.ready;
  const result = figures(await load(ready.listener, { secret: SECRET, amount: MEMORY_DELIVERIES }));
  await settle(() => listenProc.deliveries >= result.total);
  await new Promise((r) => setTimeout(r, 1000));
  const rss = await procStatus(listenProc.child.pid, 'VmRSS');
  const answered = listenProc.deliveries;
  await listenProc.stop();
  await rm(dir, { recursive: true, force: true });
  return {
    deliveries: result.total,
    non2xx: result.non2xx,
    errors: result.errors,
    answeredByListener: answered,
    rssMiB: mib(rss),
  };
}

/** The testing library's sandbox, started and closed five times in this process: the median start. */
export async function testingSandboxStart() {
  const { startSandbox } = await import('../../dist/testing/index.js');
  const times = [];
  for (let i = 0; i < 5; i += 1) {
    const started = performance.now();
    const sandbox = await startSandbox();
    times.push(performance.now() - started);
    await sandbox.close();
  }
  return Math.round(times.sort((a, b) => a - b)[2]);
}

/**
 * The page's own figures on a full 10,000-capture store (opening it, switching views, filtering), as
 * test/inspector/full-store.browser.test.ts measures them in Chromium, run here with CLOCKHOOK_BENCH=1.
 */
export async function inspectorOnFullStore() {
  const vitest = fileURLToPath(new URL('../../node_modules/.bin/vitest', import.meta.url));
  const root = fileURLToPath(new URL('../..', import.meta.url));
  await new Promise((resolve, reject) => {
    const child = spawn(vitest, ['run', 'test/inspector/full-store.browser.test.ts'], {
      cwd: root,
      env: { ...process.env, CLOCKHOOK_BENCH: '1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', () => resolve());
  });
  const figures = JSON.parse(await readFile(join(root, 'test-results', 'inspector-10k.json'), 'utf8'));
  return figures.best;
}
