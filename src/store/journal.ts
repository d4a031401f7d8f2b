import { fstatSync, ftruncateSync, openSync, renameSync, writeSync } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Adapter } from 'lowdb';
import type { Logger } from '../logger.js';
import { BodyFiles } from './body-files.js';
import { Housekeeping } from './housekeeping.js';
import { applyEntries, type JournalEntry } from './journal-entries.js';
import { readJournalFile, readSnapshotFile } from './journal-read.js';
import type { Capture } from './capture.js';
import { snapshotPieces, type StoreData, writeSnapshot } from './snapshot.js';
import { closeQuietly, cutTornEnd, fdatasyncAsync, syncDir } from './sync.js';
import { writePrivateFile } from '../folder/index.js';

/**
 * Pieces of text as one buffer, each written into it in turn: joining them first made a batch's captures' JSON
 * twice more in memory (the joined string, then its copy to encode), ~7 KB a delivery of garbage.
 */
function bytesOf(pieces: readonly string[]): Buffer {
  let size = 0;
  for (const piece of pieces) size += Buffer.byteLength(piece);
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const piece of pieces) at += bytes.write(piece, at);
  return bytes;
}

/**
 * lowdb adapter that keeps lowdb's API while writing only what changed: the snapshot file holds the
 * whole store, and a journal beside it (`<file>.journal`, NDJSON) gets one line per new or changed
 * capture (a patch for a change), fsynced. The journal is folded into a fresh snapshot (atomic
 * rename) once it is larger than twice the snapshot (and 16 MiB), so a capture's cost does not grow
 * with history, and the snapshot always parses.
 *
 * Folding does not hold appends (`fold`): the journal is renamed to `<file>.journal.folding` and a new
 * one started, and the snapshot is written in the background from the captures as they were at that
 * moment; once it is on the disk, the folded journal goes. A full store's snapshot takes a while to
 * write, and every delivery in a burst would otherwise wait for it. Until it goes, reading replays
 * the folded journal before the new one; over a snapshot that already holds it, that changes nothing
 * (see `read`).
 */
export class JournalAdapter implements Adapter<StoreData> {
  readonly journalPath: string;
  /** The journal being folded into a new snapshot (see `fold`). */
  readonly foldingPath: string;
  /** Bodies kept apart, written and fsynced with the journal lines that name them. */
  readonly bodies: BodyFiles;
  #fd: number | null = null;
  /** Bytes written to the journal's fd that no fsync has started to cover yet. */
  #unsynced = false;
  /** An fdatasync of the journal's fd is running: it must not be closed meanwhile. */
  #syncInFlight = false;
  /** A write failed: close the journal (so that a full or read-only disk can be remounted) once no fsync needs it. */
  #closeWhenSynced = false;
  /** Bytes appended since the last snapshot, and the snapshot's size: compaction is due when the journal outgrows it. */
  #journalBytes = 0;
  #snapshotBytes = 0;
  /**
   * The journal's next lines (JournalEntry, serialized), written at the next append: each line in pieces, the
   * last ending in a newline, so that a capture's JSON is written as it is, never copied into a joined string.
   */
  #pending: string[] = [];
  /** The snapshot being written in the background by `fold`. */
  #folding: Promise<void> | null = null;
  /** A folded journal is still on the disk (its snapshot failed, or a crash came first): only `compact` may go on. */
  #foldingLeft = false;
  /** The store's files were deleted or replaced under it: the next sync writes everything again (`compact`). */
  #rewrite = false;
  readonly #housekeeping: Housekeeping;
  /**
   * Set by read() (no snapshot yet, or a journal to fold into it) and by the store when it moves
   * large inline bodies of an earlier version to files; the store compacts at open when it is set.
   */
  needsCompaction = false;
  /** The store cannot be kept (its lock is another process's, see StoreGuard): every append fails with this. */
  broken: Error | null = null;

  constructor(
    readonly path: string,
    private readonly options: { logger: Logger; compactAfterBytes: number; now: () => number },
  ) {
    this.journalPath = `${path}.journal`;
    this.foldingPath = `${this.journalPath}.folding`;
    this.bodies = new BodyFiles(path, options.logger);
    this.#housekeeping = new Housekeeping(path, options.logger, options.now);
  }

  /**
   * Records a new or changed capture for the next write; `json`, the capture serialized (the store's, which
   * the page's message uses too): the line is what JSON.stringify of the entry would be.
   */
  put(capture: Capture, json: string = JSON.stringify(capture)): void {
    this.#pending.push('{"op":"put","capture":', json, '}\n');
  }

  /** Records changed fields of a capture for the next write; `json`, the patch serialized. */
  patch(id: string, patch: Partial<Capture>, json: string = JSON.stringify(patch)): void {
    this.#pending.push(`{"op":"patch","id":${JSON.stringify(id)},"patch":`, json, '}\n');
  }

  /** Records removed captures (a "clear") for the next write. */
  delete(ids: string[]): void {
    if (ids.length > 0) this.#pending.push(`${JSON.stringify({ op: 'delete', ids } satisfies JournalEntry)}\n`);
  }

  async read(): Promise<StoreData | null> {
    const { logger, now } = this.options;
    const { data: snapshot, bytes } = await readSnapshotFile(this.path, logger, now);
    this.#snapshotBytes = bytes;
    const folded = (await readJournalFile(this.foldingPath, logger, now)).entries;
    this.#foldingLeft = folded !== null;
    const journal = await readJournalFile(this.journalPath, logger, now);
    this.#journalBytes = journal.bytes;
    const entries = [...(folded ?? []), ...(journal.entries ?? [])];
    // Any journal bytes, even just a torn line a crash left, are folded in before appending again:
    // a new line after a torn one would look like damage in the middle.
    this.needsCompaction = !snapshot || this.#journalBytes > 0 || this.#foldingLeft;
    // After a crash between a fold's snapshot and the removal of its journal, that journal is replayed
    // over a snapshot that holds it: see applyEntries.
    return applyEntries(snapshot, entries, { sortById: this.#foldingLeft });
  }

  /**
   * lowdb's write, which hands over the whole store: it becomes the snapshot (`compact`). The store calls
   * it through lowdb at open and close; a capture's own write is the journal's O(1) append instead.
   */
  async write(data: StoreData): Promise<void> {
    await this.compact(data);
  }

  /** Whether the journal has outgrown the snapshot (and 16 MiB): time to fold it in. */
  get compactionDue(): boolean {
    if (this.#rewrite) return true;
    if (this.#folding || !this.#housekeeping.mayRun) return false;
    return this.#foldingLeft || this.#journalBytes > Math.max(this.options.compactAfterBytes, 2 * this.#snapshotBytes);
  }

  /** Whether `fold` can run: no folded journal is left on the disk. Else `compact` must (it holds appends). */
  get canFold(): boolean {
    return !this.#folding && !this.#foldingLeft && !this.#rewrite;
  }

  /**
   * A fold or compaction failed (a full disk): the deliveries' lines are in the journal, which keeps
   * growing; said once, tried again later (see Housekeeping).
   */
  housekeepingFailed(error: Error): void {
    this.#housekeeping.failed(error, { path: this.journalPath, bytes: this.#journalBytes });
  }

  /**
   * Whether the journal being appended to was deleted (`rm -rf .clockhook`, `git clean`): what it holds
   * would be lost with this process. One fstat, after each fsync: nothing is acknowledged from a deleted file.
   */
  get journalUnlinked(): boolean {
    if (this.#fd === null) return false;
    try {
      return fstatSync(this.#fd).nlink === 0;
    } catch {
      return true;
    }
  }

  /** The journal open now (device and inode), to tell it from a file put in its place; null when none is. */
  journalIdentity(): { dev: number; ino: number } | null {
    if (this.#fd === null) return null;
    const { dev, ino } = fstatSync(this.#fd);
    return { dev, ino };
  }

  /** The store's files are gone or replaced: the next sync writes the whole store again, with a new journal. */
  rewriteAll(): void {
    this.#rewrite = true;
  }

  /** Whether a rewrite asked for (`rewriteAll`) has not been done yet (no room for it). */
  get rewritePending(): boolean {
    return this.#rewrite;
  }

  /** Whether a snapshot was read or written: one missing from then on was deleted. */
  /** The store's bytes on the disk now (snapshot and journal): about what a fold into one file writes. */
  get bytesOnDisk(): number {
    return this.#snapshotBytes + this.#journalBytes;
  }

  get hasSnapshot(): boolean {
    return this.#snapshotBytes > 0;
  }

  /**
   * At open, when the journal cannot be folded in (a full disk): appends go on after its last whole line
   * (a torn end, a crash's, is cut off: a line after it would look like damage), and it is folded in later.
   */
  continueJournal(): void {
    this.#journalBytes = cutTornEnd(this.journalPath);
    this.needsCompaction = false;
  }

  /**
   * Appends the pending entries in one write, without an fsync (see `sync`). Direct system calls: the
   * thread pool's queue added latency under load (docs/performance-notes.md). Throws, keeping the entries
   * for the next try, when the disk refuses them.
   */
  append(): void {
    if (this.broken) throw this.broken;
    this.bodies.write();
    if (this.#pending.length === 0) return;
    const entries = this.#pending;
    this.#pending = [];
    const bytes = bytesOf(entries);
    try {
      this.#fd ??= openSync(this.journalPath, 'a', 0o600);
      const written = writeSync(this.#fd, bytes);
      if (written !== bytes.length) {
        // A full disk can take part of a write: cut it off again, or the next try would leave a
        // torn line in the middle of the journal.
        ftruncateSync(this.#fd, this.#journalBytes);
        throw Object.assign(
          new Error(
            `ENOSPC: no space left on device, wrote ${written} of ${bytes.length} bytes to ${this.journalPath}`,
          ),
          { code: 'ENOSPC', syscall: 'write', path: this.journalPath },
        );
      }
    } catch (error) {
      // Kept for the next write (a full disk may have room later); the callers learn it failed.
      this.#pending = [...entries, ...this.#pending];
      this.#closeWhenSynced = true;
      this.#closeIfIdle();
      throw error;
    }
    this.#journalBytes += bytes.length;
    this.#unsynced = true;
    this.#closeWhenSynced = false;
  }

  /**
   * Closes the journal after a failed write, unless bytes written before it still wait for their
   * fsync (closing would skip it, and their deliveries would be answered without it) or an fsync is
   * running on the fd (closing under it could fsync another file that got the same number).
   */
  #closeIfIdle(): void {
    if (!this.#closeWhenSynced || this.#unsynced || this.#syncInFlight) return;
    this.#closeWhenSynced = false;
    this.#closeJournal();
  }

  /** Puts every byte appended so far on the disk (fdatasync, off the event loop). */
  async sync(): Promise<void> {
    const fd = this.#fd;
    if (fd === null) {
      await this.bodies.sync();
      return;
    }
    this.#unsynced = false;
    this.#syncInFlight = true;
    try {
      await Promise.all([this.bodies.sync(), fdatasyncAsync(fd)]);
    } finally {
      this.#syncInFlight = false;
      this.#closeIfIdle();
    }
  }

  /**
   * Folds the journal into a new snapshot without holding appends. Resolves once everything
   * recorded so far is durable and a new journal has been started; the snapshot is written in the
   * background (`folded`), and the old journal deleted once it is on the disk. Appends made
   * meanwhile go to the new journal. A snapshot that cannot be written leaves the old journal where
   * it is (nothing is lost: reading replays it) and makes the next compaction a whole one.
   */
  async fold(data: StoreData): Promise<void> {
    if (!this.canFold) throw new Error('A folded journal is still on the disk: compact() must fold it.');
    // Everything recorded so far goes into this journal, and the snapshot is taken at the same
    // moment: it holds exactly the old snapshot and this journal, no more (a capture whose body file
    // is not written yet must not be named by it).
    this.append();
    const pieces = snapshotPieces(data);
    renameSync(this.journalPath, this.foldingPath);
    this.#foldingLeft = true;
    const fd = this.#fd;
    this.#fd = null;
    this.#journalBytes = 0;
    this.#unsynced = false;
    this.#closeWhenSynced = false;
    try {
      await Promise.all([this.bodies.sync(), fd === null ? undefined : fdatasyncAsync(fd)]);
    } finally {
      if (fd !== null) closeQuietly(fd);
    }
    // Only now: had it failed before the fsync, the lines of the folded journal would have gone unsynced.
    // Should it fail, the next append opens it. One appended meanwhile (they go on during the fsync) has opened
    // it already: a second would be left open, and go on holding the file's space after the next fold deleted it.
    this.#fd ??= openSync(this.journalPath, 'a', 0o600);
    await syncDir(dirname(this.path)); // the rename and the new journal's name
    this.#folding = this.#writeFoldedSnapshot(pieces).finally(() => {
      this.#folding = null;
    });
  }

  /** Resolves once a snapshot `fold` started is written (or has failed, which it logs). */
  async folded(): Promise<void> {
    await this.#folding;
  }

  async #writeFoldedSnapshot(pieces: Iterable<string>): Promise<void> {
    try {
      await this.writeSnapshot(pieces);
      this.#snapshotBytes = (await stat(this.path)).size;
      await this.#removeFoldedJournal();
      this.#housekeeping.succeeded();
    } catch (error) {
      // Nothing is lost: the folded journal keeps what the snapshot would have held, and is read back.
      this.housekeepingFailed(error as Error);
    }
  }

  /** Writes a snapshot to the store's path (a temp file, fsynced, renamed over it); a test gates it. */
  protected async writeSnapshot(pieces: Iterable<string>): Promise<void> {
    await writeSnapshot(this.path, pieces);
  }

  /**
   * Writes the whole store as a new snapshot, then starts an empty journal (and deletes a folded
   * one left on the disk). Appends must wait until it is done: the journal is emptied at the end.
   */
  async compact(data: StoreData): Promise<void> {
    // Only when there is one: the captures below are taken at the call, not a turn later.
    if (this.#folding) await this.#folding;
    const pending = this.#pending;
    this.#pending = [];
    // Taken now: captures stored from here on go to the next journal.
    const pieces = snapshotPieces(data);
    try {
      // The snapshot names body files: they are on the disk before it is.
      this.bodies.write();
      await this.bodies.sync();
      await this.writeSnapshot(pieces);
      this.#snapshotBytes = (await stat(this.path)).size;
    } catch (error) {
      this.#pending = [...pending, ...this.#pending];
      throw error;
    }
    this.#closeJournal();
    // The snapshot now holds everything: an empty journal replaces the old one atomically.
    await writePrivateFile(this.journalPath, '');
    this.#journalBytes = 0;
    if (this.#foldingLeft) await this.#removeFoldedJournal();
    this.needsCompaction = false;
    this.#rewrite = false;
    this.#housekeeping.succeeded();
  }

  /** Deletes the folded journal once a snapshot holds it: after that snapshot's new name is on the disk. */
  async #removeFoldedJournal(): Promise<void> {
    await syncDir(dirname(this.path));
    await unlink(this.foldingPath).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    this.#foldingLeft = false;
  }

  close(): void {
    this.#closeJournal();
    this.bodies.close();
  }

  #closeJournal(): void {
    const fd = this.#fd;
    this.#fd = null;
    this.#unsynced = false;
    this.#closeWhenSynced = false;
    if (fd !== null) closeQuietly(fd);
  }
}
