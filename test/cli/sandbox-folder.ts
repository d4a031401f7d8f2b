// What the command test files share: a folder with a sandbox the commands run there find, and a receiver,
// made once for the file. `dir`, `sandbox` and `app` are live bindings, set before the file's tests run.
import { afterAll, beforeAll } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startFolderSandbox, tempDir } from '../helpers/sandbox.js';

export let dir: { path: string; remove: () => Promise<void> };
export let sandbox: Sandbox;
export let app: Receiver;

export function useSandboxFolder(): void {
  beforeAll(async () => {
    dir = await tempDir();
    sandbox = await startFolderSandbox(dir.path);
    app = await startReceiver();
  });
  afterAll(async () => {
    await sandbox.close();
    await app.close();
    await dir.remove();
  });
}

/** A clockhook command run in the folder. */
export const cli = (...args: string[]) => runCli(args, { cwd: dir.path });
