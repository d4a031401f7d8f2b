import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type CaptureStore, ensurePrivateDir } from '../store/index.js';
import { type ListenDiscovery, writeListenDiscovery } from './discovery.js';
import type { Setup } from './options.js';

/** How often the session's files are looked for (as the capture store's are: StoreGuard). */
const LOOK_EVERY_MS = 1_000;

/**
 * What a listen session keeps in its state folder beside the capture store, written back when it is deleted
 * while listen runs (`rm -rf .clockhook`, `git clean -xfd`): the endpoints' secrets, the page's token and
 * listen.json (the embedded sandbox keeps its own files: SandboxFiles). Each part of the session says how in
 * `Setup.restorers`.
 */
export class SessionFiles {
  /** What was said last of files that could not be written back: said once, not at every look. */
  #said: string | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly setup: Setup) {}

  /**
   * Writes the files back: all of them (`all`: the capture store's guard made the folder again), or those
   * found missing (an `rm -rf` that met the folder made again may still remove files it listed before). The
   * endpoints' records are written back only with the folder: one missing alone may have been emptied on
   * purpose. Said in one line, with what could not be written and why.
   */
  async restore(all: boolean): Promise<void> {
    const { restorers, logger, stateDir } = this.setup;
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
    if (written.length === 0 && this.#said === line) return;
    this.#said = line;
    logger.warn(line);
  }

  /**
   * Looks for the files every second, until `stop`. A folder that is gone is the store guard's to make again
   * when the capture store is in it (it calls `restore(true)` then); with the store elsewhere (`--db`), it is
   * made again here, and a folder made again by another (a sandbox keeping its own files) has everything
   * written back, as a folder made here does.
   */
  watch(): void {
    const { options, stateDir } = this.setup;
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
      await this.restore(remade);
    };
    this.#timer = setInterval(() => {
      if (looking) return;
      looking = true;
      void look()
        .catch(() => {}) // the next look tries again
        .finally(() => (looking = false));
    }, LOOK_EVERY_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }
}

/**
 * Writes listen.json (how replay and the other commands find this listen), and from now on writes back the
 * session's files should they be deleted (see SessionFiles), until the session ends.
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
  const files = new SessionFiles(setup);
  const unwatch = store.onRecovered(() => void files.restore(true));
  files.watch();
  setup.cleanups.push(async () => {
    unwatch();
    files.stop();
  });
}
