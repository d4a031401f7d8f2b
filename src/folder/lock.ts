import { open, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { assertNotFolder, ensurePrivateDir, ForeignPathError, inStateDir } from './private-files.js';
import { CliError } from '../errors.js';

/** A file another live process holds the lock of: a second listen on a store, a second sandbox on a state. */
export class StoreLockedError extends CliError {
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
 * Creates the lock holding this process's pid; a pid the disk had no room for leaves no empty lock behind
 * (one would be taken for another program's file outside .clockhook, refusing every later start).
 */
async function writeLockFile(lockPath: string): Promise<void> {
  const handle = await open(lockPath, 'wx', 0o600);
  try {
    await handle.writeFile(String(process.pid));
  } catch (error) {
    await handle.close();
    await unlink(lockPath).catch(() => {});
    // A file handle's errors name no path: this one says which file could not be written.
    throw Object.assign(error as Error, { path: lockPath });
  }
  await handle.close();
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
      await writeLockFile(lockPath);
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        // Only while it is this process's: after the folder was deleted under it, another may hold it now.
        const holder = await readFile(lockPath, 'utf8').catch(() => null);
        if (holder?.trim() === String(process.pid)) await unlink(lockPath).catch(() => {});
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
    // An empty one is a start's that failed before writing its pid (a full disk): stale.
    if (text !== '' && !/^\d+\n?$/.test(text) && !inStateDir(lockPath)) {
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

/**
 * Takes a state file's lock again after its folder was deleted under this process (`rm -rf .clockhook`): the
 * folder is made again, and the lock taken unless it still holds this process's pid. Resolves with the new
 * release function, or null when the lock was still this process's; throws StoreLockedError when another
 * process took it meanwhile.
 */
export async function lockAgain(
  path: string,
  inUse?: (pid: number) => Promise<string>,
): Promise<(() => Promise<void>) | null> {
  await ensurePrivateDir(dirname(path));
  const holder = await readFile(`${path}.lock`, 'utf8').catch(() => null);
  if (holder?.trim() === String(process.pid)) return null;
  return acquireLock(path, inUse);
}
