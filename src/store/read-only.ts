import { stat } from 'node:fs/promises';
import { silentLogger } from '../logger.js';
import { BodyFiles } from './body-files.js';
import { type Capture, decodeBody } from './capture.js';
import { applyEntries, type JournalEntry, readJournalEntries } from './journal-entries.js';
import { parseSnapshot } from './snapshot.js';
import { CliError } from '../errors.js';

/** The capture store cannot be read (a damaged snapshot, say): nothing was changed. */
export class StoreUnreadableError extends CliError {
  override readonly name = 'StoreUnreadableError';
}

/** A capture store read once, without its lock, as it was at that moment. */
export interface StoreReading {
  path: string;
  /** Every capture, oldest first. */
  captures: Capture[];
  /** The whole body of a capture, from its own file when it was kept apart. */
  body(capture: Capture): Promise<Buffer>;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
}

/** A journal's entries; none when there is none (a fold may rename it away at any moment: see readConsistently). */
async function entriesOf(path: string): Promise<JournalEntry[]> {
  try {
    return (await readJournalEntries(path)).entries;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Which files the store is now: a fold renames the journal and writes a new snapshot (new inodes each). */
async function filesNow(path: string): Promise<string> {
  const inode = (file: string) =>
    stat(file).then(
      (s) => s.ino,
      () => -1,
    );
  return (await Promise.all([path, `${path}.journal.folding`, `${path}.journal`].map(inode))).join(':');
}

/** The snapshot, then the journal being folded and the journal, as of one moment. */
async function readOnce(path: string) {
  let snapshot = null;
  if (await exists(path)) {
    snapshot = await parseSnapshot(path);
    if (!snapshot) {
      throw new StoreUnreadableError(
        `${path} is not a capture store clockhook can read (damaged?). Start listen once: it moves a damaged store aside and starts a new one.`,
      );
    }
  }
  const folding = await entriesOf(`${path}.journal.folding`);
  const entries = [...folding, ...(await entriesOf(`${path}.journal`))];
  return applyEntries(snapshot, entries, { sortById: folding.length > 0 });
}

/**
 * The store as of one moment: read again when a fold renamed the journal or replaced the snapshot while it
 * was read (the entries of a journal renamed between the two reads were in neither file read).
 */
async function readConsistently(path: string) {
  for (let tries = 1; ; tries++) {
    const before = await filesNow(path);
    const data = await readOnce(path);
    if (tries === 5 || (await filesNow(path)) === before) return data;
  }
}

/**
 * Reads a capture store while `listen` may be writing it (the lock is for writers): the snapshot, then
 * the journal being folded and the journal, up to the last whole line. Nothing is moved, written or
 * locked; a store that does not exist reads as empty.
 */
export async function readCaptureStore(path: string): Promise<StoreReading> {
  const data = await readConsistently(path);
  const bodies = new BodyFiles(path, silentLogger);
  return {
    path,
    captures: data?.captures ?? [],
    async body(capture) {
      if (!capture.bodyFile) return decodeBody(capture);
      try {
        return await bodies.read(capture.bodyFile);
      } catch (error) {
        const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it is gone' : (error as Error).message;
        throw new StoreUnreadableError(`The body of ${capture.id} was kept in ${capture.bodyFile}, but ${why}.`);
      }
    },
  };
}
