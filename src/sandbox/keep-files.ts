import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Logger } from '../logger.js';
import { lockAgain } from '../store/index.js';

/** How often a running sandbox looks for its files. */
const LOOK_EVERY_MS = 1_000;

interface Keeping {
  dbPath: string | null;
  discoveryPath: string | null;
  logger: Logger;
  /** Writes the whole state (lowdb's write). */
  persist: () => Promise<void>;
  /** Writes the discovery file. */
  writeDiscovery: () => Promise<void>;
  /** Who holds the state's lock, said when another process took it meanwhile. */
  inUse: (pid: number) => Promise<string>;
}

/**
 * A running sandbox's files: its state (with its lock) and its discovery file, which the other commands of the
 * folder find it through. `rm -rf .clockhook` or `git clean -xfd` while it runs would leave it serving with
 * none of them (`clockhook trigger` then finds no sandbox, and a second sandbox could take its state): within
 * a second, it makes the folder again, takes the lock again and writes both back from memory, said in one line.
 */
export class SandboxFiles {
  #release: () => Promise<void>;
  #timer: NodeJS.Timeout | null = null;
  /** The look under way, if one is: stopping waits for it, so that nothing is written after the stop. */
  #looking: Promise<void> | null = null;
  #said: string | null = null;

  constructor(
    private readonly keeping: Keeping,
    release: () => Promise<void>,
  ) {
    this.#release = release;
  }

  start(): void {
    const { dbPath, discoveryPath } = this.keeping;
    if (!dbPath && !discoveryPath) return; // in memory only (a test's sandbox): nothing to keep
    this.#timer = setInterval(() => {
      this.#looking ??= this.#look().finally(() => (this.#looking = null));
    }, LOOK_EVERY_MS);
    this.#timer.unref();
  }

  /** Looks once; writes back what is missing. */
  async #look(): Promise<void> {
    const { dbPath, discoveryPath, logger } = this.keeping;
    const files = [dbPath, dbPath && `${dbPath}.lock`, discoveryPath].filter((path): path is string => !!path);
    const missing = files.filter((path) => !existsSync(path));
    if (missing.length === 0) return;
    try {
      if (dbPath) this.#release = (await lockAgain(dbPath, this.keeping.inUse)) ?? this.#release;
      await this.keeping.persist();
      await this.keeping.writeDiscovery();
      this.#said = null;
      const folder = dirname(missing[0]);
      logger.warn(
        `The sandbox's ${missing.map((path) => basename(path)).join(', ')} in ${folder} ${missing.length === 1 ? 'was' : 'were'} deleted while it runs: wrote them back from memory, so that the other commands of the folder find it again.`,
      );
    } catch (error) {
      const problem = `The sandbox's files in ${dirname(files[0])} were deleted while it runs, and cannot be written back: ${(error as Error).message}. Other commands of the folder do not find it; stop it and start it again.`;
      if (this.#said !== problem) logger.error(problem);
      this.#said = problem;
    }
  }

  /** Stops looking (once a look under way is done): the sandbox is closing, and removes its discovery file. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#looking;
  }

  /** Releases the state's lock (the last thing a closing sandbox does). */
  release(): Promise<void> {
    return this.#release();
  }
}
