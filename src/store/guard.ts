import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../logger.js';
import type { JournalAdapter } from './journal.js';
import { ensurePrivateDir, type FolderKeeper, inStateDir, lockAgain, StoreLockedError } from '../folder/index.js';

/** How many times a recovery makes the folder again when it vanishes under it (an `rm -rf` still at work). */
const RECOVER_ATTEMPTS = 5;

/** What the guard needs of the store it watches. */
export interface Guarded {
  path: string;
  adapter: JournalAdapter;
  logger: Logger;
  /** How many captures the store holds (in memory): what is written back. */
  count(): number;
  /** Writes the whole store anew (a snapshot and an empty journal); resolves once it is on the disk. */
  rewrite(): Promise<void>;
}

const missing = (error: NodeJS.ErrnoException) => {
  if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
  throw error;
};

/**
 * Watches an open store's files: `rm -rf .clockhook` or `git clean -xfd` while listen runs would otherwise leave
 * it appending to a deleted journal, with no lock (a second listen could start), and lose every delivery it
 * acknowledged since at the next crash. At each look of its folder's keeper (FolderKeeper: about a second
 * after a deletion or replacement), and at once when an fsync finds the journal deleted (GroupCommit), it
 * makes the folder and its `.gitignore` again, takes the lock again and writes the store back from memory;
 * the keeper then writes back what the other parts keep there. When another process took the lock
 * meanwhile, it cannot: the store refuses every write (deliveries get 503) until that process is gone.
 */
export class StoreGuard {
  #release: () => Promise<void>;
  #unwatch: () => Promise<void> = async () => {};
  /** What is wrong now, said once until it is mended. */
  #said: string | null = null;

  constructor(
    private readonly store: Guarded,
    release: () => Promise<void>,
  ) {
    this.#release = release;
  }

  /** Looks at the store's files at each look of `keeper` (one look at a time: the keeper's). */
  start(keeper: FolderKeeper): void {
    const unwatch = keeper.watch(() => this.check());
    // A look under way may be taking the lock again: it is done before the lock is let go.
    this.#unwatch = () => {
      unwatch();
      return keeper.idle();
    };
  }

  /**
   * Makes the folder (with its `.gitignore`) and takes the lock again when it is not this process's. An
   * `rm -rf` still running may remove the folder just made (ENOENT): it is made again, a few times.
   */
  async recover(): Promise<void> {
    const { path, adapter } = this.store;
    for (let attempt = 1; ; attempt++) {
      try {
        this.#release = (await lockAgain(path)) ?? this.#release;
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === RECOVER_ATTEMPTS) throw error;
      }
    }
    adapter.broken = null;
  }

  /** Looks at the files once; mends what it finds wrong (see the class). */
  async check(): Promise<void> {
    try {
      const problem = await this.#problem();
      if (problem) await this.#mend(problem);
      else if (this.#gitignoreGone()) await ensurePrivateDir(dirname(this.store.path));
    } catch (error) {
      const problem = `could not look at it: ${(error as Error).message}`;
      if (this.#said !== problem) this.store.logger.warn(`The capture store ${this.store.path}: ${problem}`);
      this.#said = problem;
    }
  }

  async #problem(): Promise<string | null> {
    const { path, adapter } = this.store;
    if (!(await stat(dirname(path)).catch(missing))) return `its folder ${dirname(path)} was deleted`;
    const holder = await readFile(`${path}.lock`, 'utf8').catch(missing);
    if (holder === null) return `its lock ${path}.lock was deleted`;
    if (holder.trim() !== String(process.pid)) return `its lock ${path}.lock was replaced`;
    if (adapter.hasSnapshot && !(await stat(path).catch(missing))) return `${path} was deleted`;
    const open = adapter.journalIdentity();
    if (open) {
      const now = await stat(adapter.journalPath).catch(missing);
      if (!now || now.ino !== open.ino || now.dev !== open.dev) return `its journal ${adapter.journalPath} was deleted`;
    }
    return null;
  }

  async #mend(problem: string): Promise<void> {
    try {
      await this.recover();
      await this.store.rewrite();
    } catch (error) {
      this.#refuse(problem, error as Error);
      return;
    }
    // No room to write it back (a full disk): the journal keeps the deliveries, and the next look tries again.
    if (!this.store.adapter.rewritePending) this.#announce(problem);
  }

  /**
   * An fsync found the journal deleted: the folder and lock are made again here, and GroupCommit writes the
   * store back before anything in the deleted journal is called durable. Throws when it cannot.
   */
  async recoverAtSync(): Promise<void> {
    const problem = `its journal ${this.store.adapter.journalPath} was deleted`;
    await this.#recoverOrRefuse(problem);
    this.#announce(problem);
  }

  async #recoverOrRefuse(problem: string): Promise<void> {
    try {
      await this.recover();
    } catch (error) {
      this.#refuse(problem, error as Error);
      throw error;
    }
    this.#said = null;
  }

  /**
   * An fsync's look at the folder's own files, two stats: an `rm -rf` that met the files made again after it
   * removed the journal (the folder then stays, "Directory not empty") may still take the lock and `.gitignore`
   * it had listed before. They are made again here, before anything is acknowledged without them.
   */
  async keepAtSync(): Promise<void> {
    const lock = `${this.store.path}.lock`;
    if (!existsSync(lock)) {
      const problem = `its lock ${lock} was deleted`;
      await this.#recoverOrRefuse(problem);
      this.store.logger.warn(`The capture store ${this.store.path}: ${problem} while listen runs: took it again.`);
    } else if (this.#gitignoreGone()) await ensurePrivateDir(dirname(this.store.path));
  }

  /** Whether the `.clockhook` folder's `.gitignore` (which keeps the endpoint's secret out of git) is gone. */
  #gitignoreGone(): boolean {
    return inStateDir(this.store.path) && !existsSync(join(dirname(this.store.path), '.gitignore'));
  }

  /**
   * The store cannot be made again. Taken by another listen, it refuses every write until that one is gone;
   * otherwise (no room, say) each fsync and each look tries again, and what they cover is refused meanwhile.
   */
  #refuse(problem: string, error: Error): void {
    if (error instanceof StoreLockedError) this.store.adapter.broken = error;
    if (this.#said === problem) return;
    this.#said = problem;
    const why =
      error instanceof StoreLockedError
        ? `another clockhook (pid ${error.pid}) took its lock meanwhile`
        : error.message;
    this.store.logger.error(
      `The capture store ${this.store.path} is gone (${problem}) and cannot be made again: ${why}. Deliveries are answered 503 (the service retries them) until it can; stop the other listen, or this one.`,
    );
  }

  #announce(problem: string): void {
    this.#said = null;
    this.store.logger.warn(
      `The capture store ${this.store.path} was deleted while listen runs (${problem}): made it again, with its lock, and wrote back the ${this.store.count()} captures held. Bodies kept in files of their own that went with it are lost.`,
    );
  }

  /** Stops watching and releases the lock. */
  async close(): Promise<void> {
    await this.#unwatch();
    await this.#release();
  }
}
