import { closeSync, fdatasync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import { readFile, rename, stat } from 'node:fs/promises';
import type { Adapter } from 'lowdb';
import type { Logger } from '../logger.js';
import type { Capture } from './capture.js';
import { moveAside, writePrivateFile } from './private-files.js';

/** The capture file: `{ "version": 1, "captures": [ … ] }`, newest last. */
export interface StoreData {
  version: 1;
  captures: Capture[];
}

const fdatasyncAsync = promisify(fdatasync);

type JournalEntry =
  | { op: 'put'; capture: Capture }
  /** Changed fields only: a forward result must not write the whole capture (its body) again. */
  | { op: 'patch'; id: string; patch: Partial<Capture> }
  | { op: 'delete'; ids: string[] };

/** Captures per piece of a snapshot (~1.5 MB of JSON with 2 KB bodies). */
const SNAPSHOT_PIECE = 500;

/**
 * The text `JSON.stringify(data)` would give, made in pieces as they are written: a 10,000-capture
 * store is ~35 MB of JSON, and making it whole (then a buffer of it) at every compaction put a
 * listener with such a store under load at 340–425 MB peak RSS instead of 310–320. The captures are
 * taken now (they are never changed in place, only replaced), so changes made while it is written
 * go to the next journal, not into it.
 */
function snapshotPieces(data: StoreData): Iterable<string> {
  const { captures, ...rest } = data;
  const taken = captures.slice();
  return (function* () {
    yield JSON.stringify({ ...rest, captures: [] }).slice(0, -2); // {"version":1,"captures":[
    for (let i = 0; i < taken.length; i += SNAPSHOT_PIECE) {
      yield `${i === 0 ? '' : ','}${taken.slice(i, i + SNAPSHOT_PIECE).map((capture) => JSON.stringify(capture)).join(',')}`;
    }
    yield ']}';
  })();
}

function isStoreData(value: unknown): value is StoreData {
  return typeof value === 'object' && value !== null && (value as StoreData).version === 1 && Array.isArray((value as StoreData).captures);
}

/**
 * lowdb adapter that keeps lowdb's API while writing only what changed: the snapshot file holds the
 * whole store, and a journal beside it (`<file>.journal`, NDJSON) gets one line per new or changed
 * capture (a patch for a change), fsynced. The journal is folded into a fresh snapshot (atomic
 * rename) once it is larger than twice the snapshot (and 16 MiB), so a capture's cost does not grow
 * with history, and the snapshot always parses.
 */
export class JournalAdapter implements Adapter<StoreData> {
  readonly journalPath: string;
  #fd: number | null = null;
  /** Bytes appended since the last snapshot, and the snapshot's size: compaction is due when the journal outgrows it. */
  #journalBytes = 0;
  #snapshotBytes = 0;
  #pending: JournalEntry[] = [];
  /** Set by read(): no snapshot yet, or a journal to fold into it. */
  needsCompaction = false;

  constructor(
    readonly path: string,
    private readonly options: { logger: Logger; compactAfterBytes: number; now: () => number },
  ) {
    this.journalPath = `${path}.journal`;
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
    const entries = await this.#readJournal();
    // Any journal bytes, even just a torn line a crash left, are folded in before appending again:
    // a new line after a torn one would look like damage in the middle.
    this.needsCompaction = !snapshot || this.#journalBytes > 0;
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
    return this.#journalBytes > Math.max(this.options.compactAfterBytes, 2 * this.#snapshotBytes);
  }

  /**
   * Appends the pending entries in one write, without an fsync (see `sync`). Direct system calls:
   * through the thread pool a write of a few KB took ~1 ms under load. Throws, keeping the entries
   * for the next try, when the disk refuses them.
   */
  append(): void {
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
        throw Object.assign(new Error(`ENOSPC: no space left on device, wrote ${written} of ${bytes.length} bytes to ${this.journalPath}`), { code: 'ENOSPC' });
      }
    } catch (error) {
      // Kept for the next write (a full disk may have room later); the callers learn it failed.
      this.#pending = [...entries, ...this.#pending];
      this.#closeJournal();
      throw error;
    }
    this.#journalBytes += bytes.length;
  }

  /** Puts every byte appended so far on the disk (fdatasync, off the event loop). */
  async sync(): Promise<void> {
    if (this.#fd !== null) await fdatasyncAsync(this.#fd);
  }

  /** Writes the whole store as a new snapshot, then starts an empty journal. */
  async compact(data: StoreData): Promise<void> {
    const pending = this.#pending;
    this.#pending = [];
    try {
      await writePrivateFile(this.path, snapshotPieces(data));
      this.#snapshotBytes = (await stat(this.path)).size;
    } catch (error) {
      this.#pending = [...pending, ...this.#pending];
      throw error;
    }
    this.#closeJournal();
    // The snapshot now holds everything: an empty journal replaces the old one atomically.
    await writePrivateFile(this.journalPath, '');
    this.#journalBytes = 0;
    this.needsCompaction = false;
  }

  close(): void {
    this.#closeJournal();
  }

  #closeJournal(): void {
    const fd = this.#fd;
    this.#fd = null;
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
  }

  async #readSnapshot(): Promise<StoreData | null> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    this.#snapshotBytes = Buffer.byteLength(text);
    try {
      const value: unknown = JSON.parse(text);
      if (isStoreData(value)) return value;
    } catch {
      // fall through to moving it aside
    }
    const aside = await moveAside(this.path, this.options.now());
    this.options.logger.warn(
      `The capture store ${this.path} is corrupt; moved it to ${aside} (nothing was overwritten) and started a new one.`,
    );
    return null;
  }

  async #readJournal(): Promise<JournalEntry[]> {
    let text: string;
    try {
      text = await readFile(this.journalPath, 'utf8');
      this.#journalBytes = Buffer.byteLength(text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const lines = text.split('\n');
    const entries: JournalEntry[] = [];
    for (let i = 0; i < lines.length; i++) {
      if (lines[i] === '') continue;
      try {
        entries.push(JSON.parse(lines[i]) as JournalEntry);
      } catch {
        // A torn last line is a write a crash cut short: it was never acknowledged. Anything else is damage.
        if (lines.slice(i + 1).every((line) => line === '')) break;
        const aside = `${this.journalPath}.corrupt-${new Date(this.options.now()).toISOString().replace(/[:.]/g, '-')}`;
        await rename(this.journalPath, aside);
        this.options.logger.warn(`The capture journal ${this.journalPath} is damaged at line ${i + 1}; moved it to ${aside}.`);
        return entries;
      }
    }
    return entries;
  }
}
