import { readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { assertNotFolder, ensurePrivateDir, ForeignPathError, inStateDir } from './private-files.js';

/** A file another live process holds the lock of: a second listen on a store, a second sandbox on a state. */
export class StoreLockedError extends Error {
  override readonly name = 'StoreLockedError';
  constructor(
    readonly path: string,
    readonly pid: number,
    message = `${path} is in use by another clockhook listen (pid ${pid}). Stop that one, or give this one its own store with --db. (If no listen runs, pid ${pid} is another program's now: delete ${path}.lock.)`,
  ) {
    super(message);
  }
}

/** Whether a process with this pid exists (EPERM: it does, as another user's). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<path>.lock` for this process. A lock whose pid is alive refuses (with `inUse`'s words for
 * who holds it); one left by a process that no longer exists is taken over. Returns the release
 * function (safe to call twice).
 */
export async function acquireLock(
  path: string,
  inUse?: (pid: number) => Promise<string>,
): Promise<() => Promise<void>> {
  const lockPath = `${path}.lock`;
  for (let tries = 0; tries < 3; tries++) {
    try {
      await writeFile(lockPath, String(process.pid), { flag: 'wx', mode: 0o600 });
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        await unlink(lockPath).catch(() => {});
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = await readFile(lockPath, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null; // released meanwhile
      throw error;
    });
    if (text === null) continue;
    // Outside .clockhook, only a pid is clockhook's: `--db Gemfile` must not delete the project's Gemfile.lock.
    if (!/^\d+\n?$/.test(text) && !inStateDir(lockPath)) {
      throw new ForeignPathError(
        `${lockPath} is not a clockhook lock (it holds something else), so it is left as it is: give --db another path. (If clockhook left it, empty after a crash, delete it.)`,
      );
    }
    const pid = Number(text);
    if (pid > 0 && isProcessAlive(pid)) throw new StoreLockedError(path, pid, await inUse?.(pid));
    await unlink(lockPath).catch(() => {}); // stale: its process is gone
  }
  throw new Error(`could not take the lock ${lockPath}; remove it if no clockhook listen is running.`);
}

/**
 * Readies a state file for this process (the capture store, a sandbox's state): refuses a path that is a
 * folder (`example` names a file to give instead), makes its folder, and takes its lock (see acquireLock).
 * Returns the release function.
 */
export async function claimStateFile(
  path: string,
  example: string,
  inUse?: (pid: number) => Promise<string>,
): Promise<() => Promise<void>> {
  await assertNotFolder(path, example);
  await ensurePrivateDir(dirname(path));
  return acquireLock(path, inUse);
}
