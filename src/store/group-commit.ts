import type { JournalAdapter } from './journal.js';
import type { StoreData } from './snapshot.js';
import { realSleep } from '../sleep.js';

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function deferred(): Deferred {
  let resolve: () => void = () => {};
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {}); // whoever needs the outcome awaits it; nobody else must crash on it
  return { promise, resolve, reject };
}

export interface GroupCommitOptions {
  /**
   * Back-to-back fsyncs start at least this far apart, so that in a burst each covers more
   * deliveries: an fsync costs about the same CPU for one capture as for ten. A lone change is
   * never held, since its fsync starts at once when the last one began longer ago than this.
   * @default 0
   */
  minSyncIntervalMs?: number;
  /** Milliseconds on a monotonic clock. @default performance.now */
  now?: () => number;
  /** @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}

/** What GroupCommit asks of the store's guard after each fsync, before anything it covered is called durable. */
export interface SyncGuard {
  /** Makes the store's folder and lock again once its journal is found deleted (the store is then written anew). */
  recover(): Promise<void>;
  /** Takes the lock (and `.gitignore`) again when they went while the journal stayed (see StoreGuard.keepAtSync). */
  keep(): Promise<void>;
}

const UNGUARDED: SyncGuard = { recover: async () => {}, keep: async () => {} };

/** A change on its way to disk: `written` once the system has it (no crash of ours can lose it), `durable` once fsynced. */
export interface Staged {
  written: Promise<void>;
  durable: Promise<void>;
}

/**
 * Group commit in two phases. Changes staged during one turn of the event loop share one append
 * (a direct write); fsyncs run off the event loop, one at a time, each covering every append made
 * before it started, while the next appends go on. Folding the journal into a snapshot takes an
 * fsync's turn and lets appends go on while the snapshot is written (JournalAdapter.fold); only a
 * whole compaction (after a fold failed, or a crash in one) holds appends until it is done.
 */
export class GroupCommit {
  #collecting: { written: Deferred; durable: Deferred; changes: number } | null = null;
  /** Appended batches waiting for an fsync, with how many changes each holds. */
  readonly #awaitingSync: { durable: Deferred; changes: number }[] = [];
  #scheduled = false;
  #syncing = false;
  #compacting = false;

  #lastSyncStarted = -Infinity;
  /** How many changes the last fsync covered: more than one means they are arriving together. */
  #lastCovered = 0;
  readonly #minSyncIntervalMs: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly adapter: JournalAdapter,
    private readonly data: () => StoreData,
    options: GroupCommitOptions = {},
    private readonly guard: SyncGuard = UNGUARDED,
  ) {
    this.#minSyncIntervalMs = options.minSyncIntervalMs ?? 0;
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? realSleep;
  }

  /** Stages whatever the adapter has pending. */
  stage(): Staged {
    this.#collecting ??= { written: deferred(), durable: deferred(), changes: 0 };
    this.#collecting.changes += 1;
    this.#schedule();
    return { written: this.#collecting.written.promise, durable: this.#collecting.durable.promise };
  }

  /** Resolves once everything staged so far is durable and no fsync or compaction is running. */
  async drain(): Promise<void> {
    await this.stage().durable;
    while (this.#syncing || this.#collecting) await new Promise((resolve) => setImmediate(resolve));
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#append();
    });
  }

  #append(): void {
    if (this.#compacting) return; // picked up again when compaction ends
    const batch = this.#collecting;
    if (!batch) return;
    this.#collecting = null;
    try {
      this.adapter.append();
    } catch (error) {
      batch.written.reject(error);
      batch.durable.reject(error);
      return;
    }
    batch.written.resolve();
    this.#awaitingSync.push(batch);
    void this.#syncLoop();
  }

  async #syncLoop(): Promise<void> {
    if (this.#syncing) return;
    this.#syncing = true;
    while (this.#awaitingSync.length > 0) {
      // In a burst (the last fsync covered several changes), appends made while this one waits ride along
      // with it. A change that came alone, one after another (a sender waiting for each answer), gains
      // nothing from waiting: nothing else would ride along.
      const wait = this.#lastSyncStarted + this.#minSyncIntervalMs - this.#now();
      if (wait > 0 && this.#lastCovered > 1) await this.#sleep(wait);
      this.#lastSyncStarted = this.#now();
      const covered = this.#awaitingSync.splice(0);
      this.#lastCovered = covered.reduce((sum, batch) => sum + batch.changes, 0);
      try {
        await this.#syncOrHousekeep();
        if (this.adapter.journalUnlinked) await this.#rewrite();
        else await this.guard.keep();
        for (const batch of covered) batch.durable.resolve();
      } catch (error) {
        for (const batch of covered) batch.durable.reject(error);
      } finally {
        if (this.#compacting) {
          this.#compacting = false;
          if (this.#collecting) this.#schedule();
        }
      }
    }
    this.#syncing = false;
  }

  /**
   * An fsync, or the fold or compaction that is due in its place. These are housekeeping: one that fails (no
   * room for a new snapshot) must not fail the deliveries, whose lines are in the journal; it is said once
   * and tried again later, and the journal is fsynced instead.
   */
  async #syncOrHousekeep(): Promise<void> {
    if (!this.adapter.compactionDue) return this.adapter.sync();
    try {
      if (this.adapter.canFold) {
        await this.adapter.fold(this.data());
      } else {
        this.#compacting = true;
        await this.adapter.compact(this.data());
      }
    } catch (error) {
      this.adapter.housekeepingFailed(error as Error);
      await this.adapter.sync();
    }
  }

  /**
   * The journal was deleted under the store (its folder removed): what it holds would go with this process,
   * so before anything in it is called durable, the store's folder and lock are made again (`recover`) and the
   * whole store is written anew. Should that fail, the deliveries waiting are refused (503).
   */
  async #rewrite(): Promise<void> {
    await this.guard.recover();
    this.#compacting = true;
    this.adapter.rewriteAll();
    await this.adapter.compact(this.data());
  }
}
