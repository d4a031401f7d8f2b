import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type CaptureStore, ensurePrivateDir } from '../store/index.js';
import { type ListenDiscovery, writeListenDiscovery } from './discovery.js';
import type { Setup } from './options.js';

/** How often the session's files are looked for (as the capture store's are: StoreGuard). */
const LOOK_EVERY_MS = 1_000;

/** What each session said last of files it could not write back: said once, not at every look. */
const saidLast = new WeakMap<Setup, string>();

/**
 * Writes back what the session keeps in its state folder beside the capture store when it is deleted while
 * listen runs (`rm -rf .clockhook`, `git clean -xfd`): the endpoints' secrets, the page's token and listen.json
 * (the embedded sandbox keeps its own files: SandboxFiles). The capture store's guard makes the folder again
 * and calls this at once (`all`); between times, a file of them found missing is written back alone (an
 * `rm -rf` that met the folder made again may still remove files it listed before). The endpoints' records are
 * written back only with the folder: one missing alone may have been emptied on purpose. Said in one line, with
 * what could not be written and why.
 */
export async function restoreSessionFiles(setup: Setup, all: boolean): Promise<void> {
  const { restorers, logger, stateDir } = setup;
  const written: string[] = [];
  const failed: string[] = [];
  for (const { what, paths, write } of restorers) {
    if (!all && !paths.some((path) => !existsSync(path))) continue;
    await write().then(
      () => written.push(what),
      (error: Error) => failed.push(`${what}: ${error.message}`),
    );
  }
  if (written.length === 0 && failed.length === 0) return;
  const said = written.length > 0 ? `Wrote back what listen keeps in ${stateDir}: ${written.join(', ')}.` : '';
  const not = failed.length > 0 ? ` Could not write back ${failed.join('; ')} (tried again every second).` : '';
  const line = `${said}${not}`.trim();
  if (written.length === 0 && saidLast.get(setup) === line) return;
  saidLast.set(setup, line);
  logger.warn(line);
}

/**
 * Looks for the session's files every second; returns the function that stops it. A folder that is gone is the
 * store guard's to make again when the capture store is in it (it calls restoreSessionFiles then); with the
 * store elsewhere (`--db`), it is made again here, and a folder made again by another (a sandbox keeping its own
 * files) has everything written back, as a folder made here does.
 */
export function watchSessionFiles(setup: Setup): () => void {
  const { options, stateDir } = setup;
  const storeInside = !options.dbPath || dirname(resolve(options.dbPath)) === resolve(stateDir);
  // Which folder it is: a folder made again often gets the inode number the deleted one had, not its birth time.
  const folderNow = () => {
    const stats = statSync(stateDir, { throwIfNoEntry: false });
    return stats && `${stats.ino}:${stats.birthtimeMs}`;
  };
  let folder = folderNow();
  let looking = false;
  const look = async () => {
    if (!existsSync(stateDir)) {
      if (storeInside) return;
      await ensurePrivateDir(stateDir);
    }
    const now = folderNow();
    const remade = now !== folder && !storeInside;
    folder = now;
    await restoreSessionFiles(setup, remade);
  };
  const timer = setInterval(() => {
    if (looking) return;
    looking = true;
    void look()
      .catch(() => {}) // the next look tries again
      .finally(() => (looking = false));
  }, LOOK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Writes listen.json (how replay and the other commands find this listen), and from now on writes back the
 * session's files should they be deleted (see restoreSessionFiles), until the session ends.
 */
export async function keepSessionFiles(
  setup: Setup,
  store: CaptureStore,
  found: Omit<ListenDiscovery, 'pid'>,
): Promise<void> {
  const discovery = join(setup.stateDir, 'listen.json');
  setup.cleanups.push(await writeListenDiscovery(discovery, found));
  setup.restorers.push({
    what: 'listen.json',
    paths: [discovery],
    write: async () => void (await writeListenDiscovery(discovery, found)),
  });
  const unwatch = store.onRecovered(() => void restoreSessionFiles(setup, true));
  const unlook = watchSessionFiles(setup);
  setup.cleanups.push(async () => {
    unwatch();
    unlook();
  });
}
