import { open, readFile } from 'node:fs/promises';
import type { Capture } from './capture.js';
import { startsWith, writePrivateFile } from '../folder/index.js';

/** The capture file: `{ "version": 1, "captures": [ … ] }`, newest last. */
export interface StoreData {
  version: 1;
  captures: Capture[];
}

/**
 * Captures per piece of a snapshot. A fold makes its pieces between deliveries, on the event loop, so
 * a piece is kept small enough not to hold a delivery up (docs/performance-notes.md, "The capture store").
 */
const SNAPSHOT_PIECE = 100;

/** The snapshot's first line; then one capture per line, then `]}`. */
export const SNAPSHOT_HEADER = '{"version":1,"captures":[';

/**
 * The snapshot as JSON with one capture per line, made in pieces as they are written: a full store is
 * tens of MB of JSON, never held whole, and a line per capture lets it be read back without one string
 * of it (V8's strings end at 512 MiB). The captures are taken now (they are never changed in place,
 * only replaced), so changes made while it is written go to the next journal, not into it.
 */
export function snapshotPieces(data: StoreData): Iterable<string> {
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

/** The lines of a file, read 1 MiB at a time: a store's files may be larger than a string can be. */
export async function* readLines(path: string): AsyncGenerator<string> {
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
export async function parseSnapshot(path: string): Promise<StoreData | null> {
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

/** Writes a snapshot to `path` (a temp file, fsynced, renamed over it). */
export async function writeSnapshot(path: string, pieces: Iterable<string>): Promise<void> {
  await writePrivateFile(path, pieces);
}
