// The one keeper of a `.clockhook` folder in this process. `rm -rf .clockhook` or `git clean -xfd` while listen or
// a sandbox runs would leave them serving with none of their files: the capture store appending to a deleted
// journal with no lock, `clockhook trigger` finding no sandbox, the secret and the page's token lost for the
// next run. Each part registers what it keeps; one timer looks, writes back what is gone, and says so once.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import { ensurePrivateDir } from './private-files.js';

/** How often the folder is looked at. */
export const LOOK_EVERY_MS = 1_000;

/** Files a part keeps in the folder, and how to write them back from memory. */
export interface Kept {
  /** What they are, for the line that says they were written back: "the sandbox's state and lock". */
  what: string;
  /**
   * The files: one of them missing has them written back. None: they are written back only with the whole
   * folder (a file the user may have emptied or deleted on purpose, such as endpoints.json).
   */
  paths: string[];
  /** Writes them back (taking a lock again first, where the part holds one). */
  write(): Promise<void>;
}

/** A part that looks after its own files itself, at each look (the capture store's guard: journal, lock). */
export type OwnLook = () => Promise<void>;

/** Which folder it is: one made again often gets the inode number the deleted one had, not its birth time. */
function folderIdentity(dir: string): string | null {
  const stats = statSync(dir, { throwIfNoEntry: false });
  return stats ? `${stats.ino}:${stats.birthtimeMs}` : null;
}

/**
 * Keeps the files of one folder: at each look (one timer, one look at a time), the parts that look after
 * themselves look first (the capture store's guard makes the folder again when its store is in it); then a
 * folder that is gone is made again, and in a folder made again (by anyone) everything is written back; else
 * what is missing is. What was written, and what could not be, is said in one line, a failure once until it
 * changes.
 */
export class FolderKeeper {
  readonly dir: string;
  readonly #logger: Logger;
  readonly #intervalMs: number;
  readonly #kept = new Set<Kept>();
  readonly #looks = new Set<OwnLook>();
  #folder: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** The look under way: a stop waits for it, so that nothing is written after the stop. */
  #looking: Promise<void> | null = null;
  #said: string | null = null;

  constructor({ dir, logger, intervalMs = LOOK_EVERY_MS }: { dir: string; logger: Logger; intervalMs?: number }) {
    this.dir = dir;
    this.#logger = logger;
    this.#intervalMs = intervalMs;
  }

  /** What is kept, as the line names it. */
  get keeping(): string[] {
    return [...this.#kept].map((kept) => kept.what);
  }

  /** Keeps `kept` from now on; returns the way to stop keeping it (its part is closing). */
  keep(kept: Kept): () => void {
    this.#kept.add(kept);
    this.#start();
    return () => this.#kept.delete(kept);
  }

  /** Runs `look` at each look, first; returns the way to stop. */
  watch(look: OwnLook): () => void {
    this.#looks.add(look);
    this.#start();
    return () => this.#looks.delete(look);
  }

  #start(): void {
    if (this.#timer) return;
    this.#folder = folderIdentity(this.dir);
    this.#timer = setInterval(() => {
      this.#looking ??= this.look().finally(() => (this.#looking = null));
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** Looks once (see the class); the timer calls it, and so may a test. */
  async look(): Promise<void> {
    for (const own of this.#looks) await own().catch(() => {}); // each says its own trouble
    let all = false;
    if (!existsSync(this.dir)) {
      await ensurePrivateDir(this.dir).catch(() => {}); // said below, as what could not be written
      all = true;
    } else if (!existsSync(join(this.dir, '.gitignore'))) await ensurePrivateDir(this.dir).catch(() => {});
    const now = folderIdentity(this.dir);
    if (now !== this.#folder) all = true;
    this.#folder = now;
    await this.#writeBack(all);
  }

  /** Writes back everything (`all`: the folder was made again) or what is missing; says it in one line. */
  async #writeBack(all: boolean): Promise<void> {
    const written: string[] = [];
    const failed: string[] = [];
    for (const kept of this.#kept) {
      if (!all && !kept.paths.some((path) => !existsSync(path))) continue;
      await kept.write().then(
        () => written.push(kept.what),
        (error: Error) => failed.push(`${kept.what}: ${error.message}`),
      );
    }
    if (written.length === 0 && failed.length === 0) return;
    const said = written.length > 0 ? `Wrote back what clockhook keeps in ${this.dir}: ${written.join(', ')}.` : '';
    const not = failed.length > 0 ? ` Could not write back ${failed.join('; ')} (tried again every second).` : '';
    const line = `${said}${not}`.trim();
    if (written.length === 0 && this.#said === line) return;
    this.#said = line;
    this.#logger.warn(line);
  }

  /** Resolves once no look is under way (a part that stops being kept waits so, before it lets go of a lock). */
  async idle(): Promise<void> {
    await this.#looking;
  }

  /** Stops looking, once a look under way is done. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#looking;
  }
}
