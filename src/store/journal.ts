import {
  closeSync,
  fdatasync,
  fsync,
  ftruncateSync,
  mkdirSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import type { Adapter } from 'lowdb';
import type { Logger } from '../logger.js';
import type { Capture } from './capture.js';
import {
  assertOwnFile,
  ForeignPathError,
  inStateDir,
  moveAside,
  startsWith,
  writePrivateFile,
} from './private-files.js';

/** The capture file: `{ "version": 1, "captures": [ … ] }`, newest last. */
export interface StoreData {
  version: 1;
  captures: Capture[];
}

const fdatasyncAsync = promisify(fdatasync);
const fsyncAsync = promisify(fsync);

/** Writes all of `bytes` to `fd` (a write may take only part); throws ENOSPC when the disk takes none. */
function writeAll(fd: number, bytes: Buffer, path: string): void {
  for (let offset = 0; offset < bytes.length;) {
    const written = writeSync(fd, bytes, offset);
    if (written === 0)
      throw Object.assign(new Error(`ENOSPC: no space left on device, writing ${path}`), { code: 'ENOSPC' });
    offset += written;
  }
}

/** Fsyncs a folder: the names created, renamed or deleted in it are on the disk once it resolves. */
async function syncDir(path: string): Promise<void> {
  const fd = openSync(path, 'r');
  try {
    await fsyncAsync(fd);
  } finally {
    closeQuietly(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

type JournalEntry =
  | { op: 'put'; capture: Capture }
  /** Changed fields only: a forward result must not write the whole capture (its body) again. */
  | { op: 'patch'; id: string; patch: Partial<Capture> }
  | { op: 'delete'; ids: string[] };

/**
 * Captures per piece of a snapshot (~300 KB of JSON with 2 KB bodies). A fold makes its pieces
 * between deliveries, on the event loop: at 500 a piece (~8 ms) came often enough during a burst
 * with a 10,000-capture store to move p99 up by ~3 ms; at 100, ~1.5 ms each, p99 stayed as it was.
 */
const SNAPSHOT_PIECE = 100;

/** The snapshot's first line; then one capture per line, then `]}`. */
const SNAPSHOT_HEADER = '{"version":1,"captures":[';

/**
 * The snapshot as JSON with one capture per line, made in pieces as they are written: a
 * 10,000-capture store is ~35 MB of JSON, and making it whole (then a buffer of it) at every
 * compaction put a listener with such a store under load at 340–425 MB peak RSS instead of 310–320;
 * and a line per capture lets it be read back without ever holding it as one string (V8's strings
 * end at 512 MiB). The captures are taken now (they are never changed in place, only replaced), so
 * changes made while it is written go to the next journal, not into it.
 */
function snapshotPieces(data: StoreData): Iterable<string> {
  const taken = data.captures.slice();
  return (function* () {
    yield `${SNAPSHOT_HEADER}\n`;
    for (let i = 0; i < taken.length; i += SNAPSHOT_PIECE) {
      yield `${i === 0 ? '' : ',\n'}${taken
        .slice(i, i + SNAPSHOT_PIECE)
        .map((capture) => JSON.stringify(capture))
        .join(',\n')}`;
    }
    yield `${taken.length > 0 ? '\n' : ''}]}`;
  })();
}

/**
 * The lines of a file, read 1 MiB at a time: a store's files may be larger than a string can be.
 * (node:readline did the same at about 1.5 times the cost, which start-up with a full store felt.)
 */
async function* readLines(path: string): AsyncGenerator<string> {
  const handle = await open(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    /** The start of a line that goes on in the next read (copies: `chunk` is read into again). */
    let partial: Buffer[] = [];
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      const data = chunk.subarray(0, bytesRead);
      let start = 0;
      for (let newline = data.indexOf(10); newline !== -1; newline = data.indexOf(10, start)) {
        if (partial.length === 0) yield data.toString('utf8', start, newline);
        else {
          yield Buffer.concat([...partial, data.subarray(start, newline)]).toString('utf8');
          partial = [];
        }
        start = newline + 1;
      }
      if (start < data.length) partial.push(Buffer.from(data.subarray(start)));
    }
    if (partial.length > 0) yield Buffer.concat(partial).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Reads a snapshot line by line; one in the single-line form earlier versions wrote is parsed whole.
 * Null when it is not a snapshot (damaged); I/O errors are thrown.
 */
async function parseSnapshot(path: string): Promise<StoreData | null> {
  try {
    if (!(await startsWith(path, `${SNAPSHOT_HEADER}\n`))) {
      const value: unknown = JSON.parse(await readFile(path, 'utf8'));
      return isStoreData(value) ? value : null;
    }
    const captures: Capture[] = [];
    let header = true;
    let ended = false;
    for await (const line of readLines(path)) {
      if (header) header = false;
      else if (ended) {
        if (line !== '') return null;
      } else if (line === ']}') ended = true;
      else captures.push(JSON.parse(line.endsWith(',') ? line.slice(0, -1) : line) as Capture);
    }
    return ended ? { version: 1, captures } : null;
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

function isStoreData(value: unknown): value is StoreData {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as StoreData).version === 1 &&
    Array.isArray((value as StoreData).captures)
  );
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
 * moment; once it is on the disk, the folded journal goes. A 10,000-capture snapshot takes ~200 ms to
 * write, and every delivery in a burst would otherwise wait that long. Until it goes, reading replays
 * the folded journal before the new one; over a snapshot that already holds it, that changes nothing
 * (see `read`).
 */
export class JournalAdapter implements Adapter<StoreData> {
  readonly journalPath: string;
  /** The journal being folded into a new snapshot (see `fold`). */
  readonly foldingPath: string;
  /** Where bodies over INLINE_BODY_CHARS are kept, one file of raw bytes per capture. */
  readonly bodiesDir: string;
  /** Bodies to write, each to a file of its own, with the next append. */
  #pendingBodies: { name: string; bytes: Buffer }[] = [];
  /** Body files written and still open: the next sync (or compaction) fsyncs and closes them. */
  #unsyncedBodies: number[] = [];
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
  #pending: JournalEntry[] = [];
  /** The snapshot being written in the background by `fold`. */
  #folding: Promise<void> | null = null;
  /** A folded journal is still on the disk (its snapshot failed, or a crash came first): only `compact` may go on. */
  #foldingLeft = false;
  /**
   * Set by read() (no snapshot yet, or a journal to fold into it) and by the store when it moves
   * large inline bodies of an earlier version to files; the store compacts at open when it is set.
   */
  needsCompaction = false;

  constructor(
    readonly path: string,
    private readonly options: { logger: Logger; compactAfterBytes: number; now: () => number },
  ) {
    this.journalPath = `${path}.journal`;
    this.foldingPath = `${this.journalPath}.folding`;
    this.bodiesDir = `${path}.bodies`;
  }

  /** `bodyFile` of a capture whose body is kept apart under `name`: relative to the store's folder. */
  bodyFileFor(name: string): string {
    return `${basename(this.bodiesDir)}/${name}`;
  }

  /** Records a body to write, as its own file, with the next append (before the journal line naming it). */
  putBody(name: string, bytes: Buffer): void {
    this.#pendingBodies.push({ name, bytes });
  }

  /** The bytes of a body kept apart. */
  async readBody(bodyFile: string): Promise<Buffer> {
    const path = join(dirname(this.path), bodyFile);
    // The file name comes from the store file: it must not lead out of the bodies folder.
    if (resolve(dirname(path)) !== resolve(this.bodiesDir))
      throw new Error(`${bodyFile} is not a file in ${this.bodiesDir}.`);
    return readFile(path);
  }

  /** Deletes the files of bodies that left the store (retention, clear); ones not written yet are dropped. */
  async removeBodies(bodyFiles: string[]): Promise<void> {
    const names = new Set(bodyFiles.map((file) => basename(file)));
    this.#pendingBodies = this.#pendingBodies.filter((body) => !names.has(body.name));
    await Promise.all(
      [...names].map((name) =>
        unlink(join(this.bodiesDir, name)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT')
            this.options.logger.warn(`Could not delete ${join(this.bodiesDir, name)}: ${error.message}`);
        }),
      ),
    );
  }

  /** Deletes body files no capture names: left by a crash between a body's write and its journal line. */
  async removeOrphanBodies(captures: readonly Capture[]): Promise<void> {
    // Only files named as clockhook names bodies (a capture's id, `.partial` while written) are its own.
    const names = (await readdir(this.bodiesDir).catch(() => [] as string[])).filter((name) =>
      /^cap_\w+(\.partial)?$/.test(name),
    );
    if (names.length === 0) return;
    const kept = new Set(captures.flatMap((c) => (c.bodyFile ? [basename(c.bodyFile)] : [])));
    await this.removeBodies(names.filter((name) => !kept.has(name)).map((name) => this.bodyFileFor(name)));
  }

  /** Records a new or changed capture for the next write. */
  put(capture: Capture): void {
    this.#pending.push({ op: 'put', capture });
  }

  /** Records changed fields of a capture for the next write. */
  patch(id: string, patch: Partial<Capture>): void {
    this.#pending.push({ op: 'patch', id, patch });
  }

  /** Records removed captures (a "clear") for the next write. */
  delete(ids: string[]): void {
    if (ids.length > 0) this.#pending.push({ op: 'delete', ids });
  }

  async read(): Promise<StoreData | null> {
    const snapshot = await this.#readSnapshot();
    const folded = await this.#readJournal(this.foldingPath);
    this.#foldingLeft = folded !== null;
    const entries = [...(folded ?? []), ...((await this.#readJournal(this.journalPath)) ?? [])];
    // Any journal bytes, even just a torn line a crash left, are folded in before appending again:
    // a new line after a torn one would look like damage in the middle.
    this.needsCompaction = !snapshot || this.#journalBytes > 0 || this.#foldingLeft;
    if (!snapshot && entries.length === 0) return null;
    const data: StoreData = snapshot ?? { version: 1, captures: [] };
    const byId = new Map(data.captures.map((c, i) => [c.id, i]));
    for (const entry of entries) {
      if (entry.op === 'put') {
        const index = byId.get(entry.capture.id);
        if (index === undefined) {
          byId.set(entry.capture.id, data.captures.length);
          data.captures.push(entry.capture);
        } else data.captures[index] = entry.capture;
      } else if (entry.op === 'patch') {
        const index = byId.get(entry.id);
        if (index !== undefined) data.captures[index] = { ...data.captures[index], ...entry.patch, id: entry.id };
      } else {
        const gone = new Set(entry.ids);
        data.captures = data.captures.filter((c) => !gone.has(c.id));
        byId.clear();
        for (const [i, c] of data.captures.entries()) byId.set(c.id, i);
      }
    }
    // A crash after a fold's snapshot was written but before its journal went: the journal was
    // replayed over a snapshot that holds it. Every change comes out the same, but a capture that
    // retention dropped meanwhile (it writes no entry) came back at the end; ids sort by arrival,
    // so sorting puts it back first in line, where the store's retention drops it again.
    if (this.#foldingLeft) data.captures.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return data;
  }

  /** lowdb's write: everything pending, durably (appended and fsynced, or folded into a snapshot). */
  async write(data: StoreData): Promise<void> {
    if (this.compactionDue) {
      await this.compact(data);
      return;
    }
    this.append();
    await this.sync();
  }

  /** Whether the journal has outgrown the snapshot (and 16 MiB): time to fold it in. */
  get compactionDue(): boolean {
    if (this.#folding) return false;
    return this.#foldingLeft || this.#journalBytes > Math.max(this.options.compactAfterBytes, 2 * this.#snapshotBytes);
  }

  /** Whether `fold` can run: no folded journal is left on the disk. Else `compact` must (it holds appends). */
  get canFold(): boolean {
    return !this.#folding && !this.#foldingLeft;
  }

  /**
   * Appends the pending entries in one write, without an fsync (see `sync`). Direct system calls:
   * through the thread pool a write of a few KB took ~1 ms under load. Throws, keeping the entries
   * for the next try, when the disk refuses them.
   */
  append(): void {
    this.#appendBodies();
    if (this.#pending.length === 0) return;
    const entries = this.#pending;
    this.#pending = [];
    const bytes = Buffer.from(`${entries.map((entry) => JSON.stringify(entry)).join('\n')}\n`);
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
          { code: 'ENOSPC' },
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

  /**
   * Writes the pending bodies, each to its own file, left open for `sync`. A body that cannot be
   * written fails the append (the deliveries of the batch are answered 503, so the service sends
   * them again) and is given up: one body too large for the disk's free space must not fail every
   * delivery after it. Its capture keeps the body's beginning. A file gets its name only once it
   * is whole, so a capture never names half a body.
   */
  #appendBodies(): void {
    while (this.#pendingBodies.length > 0) {
      const { name, bytes } = this.#pendingBodies.shift() as { name: string; bytes: Buffer };
      const path = join(this.bodiesDir, name);
      const partial = `${path}.partial`;
      let fd: number | null = null;
      try {
        mkdirSync(this.bodiesDir, { recursive: true, mode: 0o700 });
        fd = openSync(partial, 'w', 0o600);
        writeAll(fd, bytes, path);
        renameSync(partial, path);
        this.#unsyncedBodies.push(fd);
      } catch (error) {
        if (fd !== null) {
          closeQuietly(fd);
          try {
            unlinkSync(partial);
          } catch {
            // no capture names it: the next start removes it
          }
        }
        throw error;
      }
    }
  }

  /** Puts every byte appended so far on the disk (fdatasync, off the event loop). */
  async sync(): Promise<void> {
    const fd = this.#fd;
    if (fd === null) {
      await this.#syncBodies();
      return;
    }
    this.#unsynced = false;
    this.#syncInFlight = true;
    try {
      await Promise.all([this.#syncBodies(), fdatasyncAsync(fd)]);
    } finally {
      this.#syncInFlight = false;
      this.#closeIfIdle();
    }
  }

  /** Fsyncs the body files written so far, then their folder (new names are entries in it), and closes them. */
  async #syncBodies(): Promise<void> {
    const fds = this.#unsyncedBodies.splice(0);
    if (fds.length === 0) return;
    try {
      // Settled, not raced: every fd is closed below, and none may be while its fsync runs.
      const failed = (await Promise.allSettled(fds.map((fd) => fdatasyncAsync(fd)))).find(
        (result) => result.status === 'rejected',
      );
      if (failed) throw failed.reason;
      await syncDir(this.bodiesDir);
    } finally {
      for (const fd of fds) closeQuietly(fd);
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
      this.#fd = openSync(this.journalPath, 'a', 0o600);
      await Promise.all([this.#syncBodies(), fd === null ? undefined : fdatasyncAsync(fd)]);
    } finally {
      if (fd !== null) closeQuietly(fd);
    }
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
    } catch (error) {
      this.options.logger.warn(
        `Could not write the capture store ${this.path}: ${(error as Error).message}. Nothing is lost (${this.foldingPath} keeps what it would have held); will try again.`,
      );
    }
  }

  /** Writes a snapshot to the store's path (a temp file, fsynced, renamed over it). */
  protected async writeSnapshot(pieces: Iterable<string>): Promise<void> {
    await writePrivateFile(this.path, pieces);
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
      this.#appendBodies();
      await this.#syncBodies();
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
    for (const fd of this.#unsyncedBodies.splice(0)) closeQuietly(fd);
  }

  #closeJournal(): void {
    const fd = this.#fd;
    this.#fd = null;
    this.#unsynced = false;
    this.#closeWhenSynced = false;
    if (fd !== null) closeQuietly(fd);
  }

  async #readSnapshot(): Promise<StoreData | null> {
    try {
      this.#snapshotBytes = (await stat(this.path)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const data = await parseSnapshot(this.path);
    if (data) return data;
    await assertOwnFile(this.path, SNAPSHOT_HEADER, 'a clockhook capture store');
    const aside = await moveAside(this.path, this.options.now());
    this.options.logger.warn(
      `The capture store ${this.path} is corrupt; moved it to ${aside} (nothing was overwritten) and started a new one.`,
    );
    return null;
  }

  /** The entries of a journal (this one, or one being folded), null when there is none. */
  async #readJournal(path: string): Promise<JournalEntry[] | null> {
    let size: number;
    try {
      size = (await stat(path)).size;
      if (path === this.journalPath) this.#journalBytes = size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    // Its lines are JSON objects: any other file by that name, outside .clockhook, is not clockhook's to move or empty.
    if (size > 0 && !inStateDir(path) && !(await startsWith(path, '{'))) {
      throw new ForeignPathError(
        `${path} is not a clockhook capture journal: it does not begin as one, so it is left as it is. Give --db another path.`,
      );
    }
    const entries: JournalEntry[] = [];
    let number = 0;
    // A torn last line is a write a crash cut short: it was never acknowledged. Anything after it is damage.
    let torn: number | null = null;
    let damaged = false;
    for await (const line of readLines(path)) {
      number += 1;
      if (line === '') continue;
      if (torn !== null) {
        damaged = true;
        break;
      }
      try {
        entries.push(JSON.parse(line) as JournalEntry);
      } catch {
        torn = number;
      }
    }
    if (damaged) {
      const aside = await moveAside(path, this.options.now());
      this.options.logger.warn(`The capture journal ${path} is damaged at line ${torn}; moved it to ${aside}.`);
    }
    return entries;
  }
}
