import { basename, dirname } from 'node:path';
import { FolderKeeper, lockAgain } from '../folder/index.js';
import type { Logger } from '../logger.js';

interface Keeping {
  dbPath: string | null;
  discoveryPath: string | null;
  logger: Logger;
  /** The keeper of the folder (listen's, for its embedded sandbox); none: one of the sandbox's own. */
  keeper?: FolderKeeper;
  /** Writes the whole state (lowdb's write). */
  persist: () => Promise<void>;
  /** Writes the discovery file. */
  writeDiscovery: () => Promise<void>;
  /** Who holds the state's lock, said when another process took it meanwhile. */
  inUse: (pid: number) => Promise<string>;
}

/**
 * A running sandbox's files, kept by its folder's keeper: its state (with its lock) and its discovery file,
 * which the other commands of the folder find it through. `rm -rf .clockhook` while it runs would leave it
 * serving with none of them (`clockhook trigger` then finds no sandbox, and a second sandbox could take its
 * state): the lock is taken again and both are written back from memory. Returns the way to stop keeping them
 * (a look under way is done first) and to let go of the lock.
 */
export function keepSandboxFiles(
  keeping: Keeping,
  release: () => Promise<void>,
): { stop: () => Promise<void>; release: () => Promise<void> } {
  const { dbPath, discoveryPath } = keeping;
  let held = release;
  const paths = [dbPath, dbPath && `${dbPath}.lock`, discoveryPath].filter((path): path is string => !!path);
  // In memory only (a test's sandbox): nothing to keep.
  if (paths.length === 0) return { stop: async () => {}, release: () => held() };
  const keeper = keeping.keeper ?? new FolderKeeper({ dir: dirname(paths[0]), logger: keeping.logger });
  const unkeep = keeper.keep({
    what: `the sandbox's ${[dbPath && `${basename(dbPath)} (with its lock)`, discoveryPath && basename(discoveryPath)].filter(Boolean).join(' and ')}`,
    paths,
    write: async () => {
      if (dbPath) held = (await lockAgain(dbPath, keeping.inUse)) ?? held;
      await keeping.persist();
      await keeping.writeDiscovery();
    },
  });
  return {
    async stop() {
      unkeep();
      if (keeping.keeper) await keeper.idle();
      else await keeper.stop();
    },
    release: () => held(),
  };
}
