import type { Low } from 'lowdb';
import { type Logger, silentLogger } from '../logger.js';
import { bodyPreview, type Capture, decodeBody, INLINE_BODY_CHARS } from './capture.js';
import { GroupCommit, type Staged } from './group-commit.js';
import { type CaptureListener, type CaptureObserver, HeldCaptures } from './held.js';
import { JournalAdapter } from './journal.js';
import type { StoreData } from './snapshot.js';
import { StoreGuard } from './guard.js';
import { CaptureTexts } from './texts.js';
import { isDiskFull, DiskFullError, spaceNeeded } from './disk-full.js';
import { OptionError } from '../errors.js';
import { claimStateFile, folderFiles, FolderKeeper } from '../folder/index.js';
import { dirname } from 'node:path';

export interface CaptureStoreOptions {
  /** The capture file. @default '.clockhook/captures.json' */
  path?: string;
  /** Only the newest this many are kept. @default 1000 */
  maxCaptures?: number;
  /** @default silent */
  logger?: Logger;
  /** @default Date.now */
  now?: () => number;
  /** The journal is folded into the snapshot once larger than this and twice the snapshot. @default 16 MiB */
  compactAfterBytes?: number;
  /**
   * In a burst, fsyncs start at least this far apart and each covers every capture written
   * meanwhile: a delivery's answer may wait up to this much longer, and the listener's CPU per
   * delivery drops (docs/performance-notes.md). Keep it short: with N deliveries in flight it caps the
   * rate at about N per interval. @default 1
   */
  syncIntervalMs?: number;
  /**
   * The keeper of the `.clockhook` folder (listen's, which keeps the other files there too): the store's guard
   * looks at its files at each of its looks; each fsync looks too. @default a keeper of the store's folder of its own
   */
  keeper?: FolderKeeper;
  /** How often a keeper of its own looks (see FolderKeeper). @default 1000 */
  guardIntervalMs?: number;
}

/** How long a lazy update may wait for a write to ride along with. */
const LAZY_WRITE_MS = 50;

/**
 * The capture store: captures in memory (lowdb's `data`), on disk as a snapshot plus an fsynced
 * journal. `add` resolves only once the capture is on disk, and concurrent adds share one write.
 */
export class CaptureStore {
  readonly path: string;
  readonly maxCaptures: number;
  readonly #db: Low<StoreData>;
  readonly #adapter: JournalAdapter;
  readonly #commit: GroupCommit;
  readonly #guard: StoreGuard;
  readonly #held = new HeldCaptures();
  /** The texts of the captures not answered yet, shared by the journal and the page's messages (see texts.ts). */
  readonly #texts = new CaptureTexts();
  #closed: Promise<void> | undefined;
  #lazyTimer: NodeJS.Timeout | null = null;
  readonly #logger: Logger;
  /** A keeper the store made for itself, stopped with it; null when it was given one. */
  #ownKeeper: FolderKeeper | null = null;

  private constructor(
    db: Low<StoreData>,
    adapter: JournalAdapter,
    release: () => Promise<void>,
    maxCaptures: number,
    logger: Logger,
    syncIntervalMs: number,
  ) {
    this.#logger = logger;
    this.#db = db;
    this.#adapter = adapter;
    this.path = adapter.path;
    this.maxCaptures = maxCaptures;
    this.#guard = new StoreGuard(
      { path: this.path, adapter, logger, count: () => db.data.captures.length, rewrite: () => this.#rewrite() },
      release,
    );
    this.#commit = new GroupCommit(
      adapter,
      () => db.data,
      { minSyncIntervalMs: syncIntervalMs },
      { recover: () => this.#guard.recoverAtSync(), keep: () => this.#guard.keepAtSync() },
    );
    this.#trim();
    this.#keepLargeBodiesApart();
    for (const capture of db.data.captures) this.#held.add(capture, { quietly: true });
  }

  /** Whether a capture's body is too long to be kept in memory (and so goes to a file of its own). */
  static #isLarge(capture: Capture): boolean {
    return capture.body.length > INLINE_BODY_CHARS && !capture.bodyFile;
  }

  /** The capture as stored when its body is large: its beginning in memory, the whole of it staged for a file. */
  #apart(capture: Capture, bytes: Buffer): Capture {
    this.#adapter.bodies.put(capture.id, bytes);
    return Object.assign({}, capture, {
      body: bodyPreview(capture.body),
      bodyFile: this.#adapter.bodies.fileFor(capture.id),
    });
  }

  /** Large bodies an earlier version kept inline go to files of their own (written by the compaction at open). */
  #keepLargeBodiesApart(): void {
    const captures = this.#db.data.captures;
    for (const [i, capture] of captures.entries()) {
      if (!CaptureStore.#isLarge(capture)) continue;
      captures[i] = this.#apart(capture, decodeBody(capture));
      this.#adapter.needsCompaction = true;
    }
  }

  /** Opens (or creates, 0600 in a 0700 folder) the store and takes its lock. */
  static async open(options: CaptureStoreOptions = {}): Promise<CaptureStore> {
    const path = options.path ?? folderFiles().captures;
    const maxCaptures = options.maxCaptures ?? 1000;
    if (!Number.isInteger(maxCaptures) || maxCaptures < 1)
      throw new OptionError(`maxCaptures must be a positive integer (got ${maxCaptures}).`);
    const release = await claimStateFile(path, 'captures.json');
    try {
      const adapter = new JournalAdapter(path, {
        logger: options.logger ?? silentLogger,
        now: options.now ?? Date.now,
        compactAfterBytes: options.compactAfterBytes ?? 16 * 1024 * 1024,
      });
      // Loaded here, not at the top: a program that never opens a store (clockhook/testing, required from
      // CommonJS by a test runner) does not load lowdb.
      const { Low } = await import('lowdb');
      const db = new Low<StoreData>(adapter, { version: 1, captures: [] });
      await db.read();
      const store = new CaptureStore(
        db,
        adapter,
        release,
        maxCaptures,
        options.logger ?? silentLogger,
        options.syncIntervalMs ?? 1,
      );
      // The file exists from the start (0600), and a journal left by a crash is folded in: when the disk has
      // room for that. A start needs room for what it writes, not for a copy of the store: on a full disk,
      // the journal goes on as it is (its torn end, a crash's, cut off), and is folded in later.
      if (adapter.needsCompaction) await store.#foldAtOpen();
      await adapter.bodies.removeOrphans(db.data.captures);
      store.#ownKeeper = options.keeper
        ? null
        : new FolderKeeper({ dir: dirname(path), logger: store.#logger, intervalMs: options.guardIntervalMs });
      store.#guard.start(options.keeper ?? (store.#ownKeeper as FolderKeeper));
      return store;
    } catch (error) {
      await release();
      throw isDiskFull(error) ? new DiskFullError(path, error as Error) : error;
    }
  }

  async #foldAtOpen(): Promise<void> {
    try {
      await this.#db.write();
    } catch (error) {
      if (!isDiskFull(error)) throw error;
      this.#adapter.continueJournal();
      this.#adapter.housekeepingFailed(error as Error);
    }
  }

  /** Writes the whole store anew, after its files were deleted (StoreGuard). */
  #rewrite(): Promise<void> {
    this.#adapter.rewriteAll();
    return this.#persist();
  }

  /** Every capture, oldest first. */
  all(): readonly Capture[] {
    return this.#db.data.captures;
  }

  get(id: string): Capture | undefined {
    return this.#held.get(id);
  }

  /** The held captures of an event (deliveries and replays with this envelope id), oldest first. */
  ofEvent(eventId: string): Capture[] {
    return this.#held.ofEvent(eventId);
  }

  /** The whole body of a capture, read from its own file when it was kept apart. */
  async body(capture: Capture): Promise<Buffer> {
    if (!capture.bodyFile) return decodeBody(capture);
    try {
      return await this.#adapter.bodies.read(capture.bodyFile);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it is gone' : (error as Error).message;
      throw new Error(
        `The body of ${capture.id} was kept in ${capture.bodyFile} beside ${this.path}, but ${reason}; only its first ${capture.body.length} characters are in the store.`,
      );
    }
  }

  /** Up to `limit` captures, newest first, older than `beforeId` when given. */
  newest(limit: number, beforeId?: string): Capture[] {
    const captures = this.#db.data.captures;
    let end = captures.length;
    if (beforeId !== undefined) {
      const index = captures.findIndex((c) => c.id === beforeId);
      end = index === -1 ? 0 : index;
    }
    return captures.slice(Math.max(0, end - limit), end).reverse();
  }

  /** Stores a new capture; resolves once it has reached the disk. */
  async add(capture: Capture): Promise<void> {
    await this.insert(capture).durable;
  }

  /**
   * Stores a new capture and says when it is written (safe from any crash of this process) and
   * when it is durable (fsynced). The listener forwards after the first and answers after the second.
   * A body longer than INLINE_BODY_CHARS goes to a file of its own (`bytes`: the raw body, when the
   * caller has it) and the stored capture keeps only its beginning. `capture`: the capture as stored
   * (for a large body, a copy without it: a caller that keeps this one keeps no whole body alive).
   */
  insert(whole: Capture, bytes?: Buffer): Staged & { capture: Capture } {
    const capture = CaptureStore.#isLarge(whole) ? this.#apart(whole, bytes ?? decodeBody(whole)) : whole;
    this.#db.data.captures.push(capture);
    this.#held.add(capture);
    const json = JSON.stringify(capture);
    this.#texts.keep(capture, json);
    this.#adapter.put(capture, json);
    this.#trim();
    this.#held.emit(capture, json);
    const staged = this.#commit.stage();
    // Before the caller learns it (promise reactions run in order): its 503 is what the capture then says.
    staged.durable.catch(() => this.#refused(capture));
    return { written: staged.written, durable: staged.durable, capture };
  }

  /**
   * A capture that could not be written was answered 503 and never forwarded: it stays marked as refused,
   * with the status the sender got, and is written so if the disk takes it later, never as accepted.
   */
  #refused(capture: Capture): void {
    if (!this.#held.has(capture.id)) return;
    void this.update(capture.id, { rejected: { statusCode: 503, code: 'capture_failed' } }, { lazy: true });
  }

  #persist(): Promise<void> {
    return this.#commit.stage().durable;
  }

  /**
   * Replaces fields of a stored capture (the forward result, a pin); resolves once written. With
   * `lazy`, it resolves at once and the change rides along with the next write (at most
   * LAZY_WRITE_MS later): a forward result must not queue a disk write of its own in front of the
   * next delivery, whose answer waits for its write.
   */
  async update(id: string, patch: Partial<Capture>, { lazy = false } = {}): Promise<Capture | undefined> {
    const captures = this.#db.data.captures;
    const current = this.#held.get(id);
    if (!current) return undefined;
    // Object.assign, not `{ ...current, ...patch }`: see the lint rule on spreads in .ci/eslint.config.mjs.
    const next: Capture = Object.assign({}, current, patch);
    next.id = id;
    // Newest last: a recent capture is near the end, so search from there.
    for (let i = captures.length - 1; i >= 0; i--) {
      if (captures[i] === current) {
        captures[i] = next;
        break;
      }
    }
    this.#held.replace(current, next);
    const json = JSON.stringify(patch);
    this.#adapter.patch(id, patch, json);
    this.#held.emit(next, this.#texts.changed(current, patch, json));
    if (lazy) this.#persistSoon();
    else await this.#persist();
    return next;
  }

  /**
   * Resolves once every change made so far is on the disk, lazy ones included: a result returned to a user or a
   * tool (a replay's) is read back the same by any other process (read your writes).
   */
  sync(): Promise<void> {
    return this.#persist();
  }

  #persistSoon(): void {
    this.#lazyTimer ??= setTimeout(() => {
      this.#lazyTimer = null;
      // A failed write keeps its entries for the next one; the deliveries' own writes report it.
      this.#persist().catch((error: Error) =>
        this.#logger.warn(`Could not write to ${this.path}: ${error.message}; it tries again.`),
      );
    }, LAZY_WRITE_MS);
  }

  /** Removes every capture that is not pinned; returns how many went. */
  async clear(): Promise<number> {
    const gone = this.#db.data.captures.filter((c) => !c.pinned);
    this.#db.data.captures = this.#db.data.captures.filter((c) => c.pinned);
    for (const capture of gone) this.#held.remove(capture);
    this.#adapter.delete(gone.map((c) => c.id));
    await this.#persist();
    // Only once the journal says they are gone: a crash before that brings them back, with their bodies.
    await this.#adapter.bodies.remove(gone.flatMap((c) => (c.bodyFile ? [c.bodyFile] : [])));
    return gone.length;
  }

  /** Tells `observer` of every capture held now (oldest first), then of every change; returns the way to stop. */
  observe(observer: CaptureObserver): () => void {
    return this.#held.observe(observer, this.#db.data.captures);
  }

  /** Calls `listener` with every new or changed capture; returns the unsubscribe function. */
  subscribe(listener: CaptureListener): () => void {
    return this.#held.subscribe(listener);
  }

  /** Writes what is pending and releases the lock. Safe to call twice. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      try {
        if (this.#lazyTimer) clearTimeout(this.#lazyTimer);
        await this.#commit.drain();
        // A clean exit leaves everything in the snapshot, readable as one JSON file; on a full disk, the
        // journal (drained above) keeps it all instead, and is folded in at the next start.
        await this.#db.write().catch((error: Error) => {
          if (!isDiskFull(error)) throw error;
          this.#logger.warn(
            `The disk holding ${this.path} is full: the store is left as its journal (${this.#adapter.journalPath}), nothing lost; the next start folds it in, which needs ${spaceNeeded(this.#adapter.bytesOnDisk)} free.`,
          );
        });
      } catch (error) {
        throw isDiskFull(error) ? new DiskFullError(this.path, error as Error, this.#adapter.bytesOnDisk) : error;
      } finally {
        this.#adapter.close();
        await this.#ownKeeper?.stop();
        await this.#guard.close();
      }
    })();
    return this.#closed;
  }

  /** Retention: keep the newest `maxCaptures`, pinned ones included in the count. */
  #trim(): void {
    const captures = this.#db.data.captures;
    const bodyFiles: string[] = [];
    // shift(), not splice(): V8 drops the first element without moving the other thousand.
    while (captures.length > this.maxCaptures) {
      const oldest = captures.shift() as Capture;
      this.#held.remove(oldest);
      if (oldest.bodyFile) bodyFiles.push(oldest.bodyFile);
    }
    // Retention writes nothing: the next start trims again. So a body file may go only once the
    // captures that pushed its capture out are on the disk; after a crash before that, the capture
    // would be back, and its body gone. (A failed write keeps the file; the next start sweeps it.)
    if (bodyFiles.length > 0) {
      this.#commit.stage().durable.then(
        () => this.#adapter.bodies.remove(bodyFiles),
        () => {},
      );
    }
  }
}
