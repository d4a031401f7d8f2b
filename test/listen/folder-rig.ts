// What the listen-in-a-folder test files share: each test gets a folder of its own, an app that answers
// 202 "queued", and its listen processes and the folder's sandboxes stopped after it. `dir` and `app` are
// live bindings, set anew before each test of a file that called useListenFolder().
import { afterEach, beforeEach } from 'vitest';
import { ApiClient } from '../../src/api/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import type { SpawnedCli } from '../helpers/cli.js';
import { startListenProcess } from '../helpers/listen.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startFolderSandbox, tempDir } from '../helpers/sandbox.js';

export let dir: { path: string; remove: () => Promise<void> };
export let app: Receiver;
/** Listen processes started by a test (killed after it); push those started otherwise. */
export const procs: SpawnedCli[] = [];
export const sandboxes: Sandbox[] = [];

export function useListenFolder(): void {
  beforeEach(async () => {
    dir = await tempDir();
    app = await startReceiver((_r, res) => {
      res.writeHead(202);
      res.end('queued');
    });
  });
  afterEach(async () => {
    for (const proc of procs.splice(0)) await proc.stop('SIGKILL');
    for (const sandbox of sandboxes.splice(0)) await sandbox.close();
    await app.close();
    await dir.remove();
  });
}

/** `clockhook listen` in the test's folder. */
export async function listen(...args: string[]) {
  const proc = await startListenProcess(args, dir.path);
  procs.push(proc);
  return proc;
}

/** A standalone sandbox in the test folder (listen finds it), with fast retries. */
export async function folderSandbox(timeScale = 0.0005) {
  const sandbox = await startFolderSandbox(dir.path, { timeScale });
  sandboxes.push(sandbox);
  return { sandbox, client: new ApiClient({ baseUrl: sandbox.apiBase, apiKey: sandbox.apiKey }) };
}

/** The API key of the folder's sandbox (the first started). */
export async function folderKey() {
  return { apiKey: sandboxes[0].apiKey };
}
