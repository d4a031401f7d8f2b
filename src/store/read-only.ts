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

async function entriesOf(path: string): Promise<JournalEntry[]> {
  return (await exists(path)) ? (await readJournalEntries(path)).entries : [];
}

/**
 * Reads a capture store while `listen` may be writing it (the lock is for writers): the snapshot, then
 * the journal being folded and the journal, up to the last whole line. Nothing is moved, written or
 * locked; a store that does not exist reads as empty.
 */
export async function readCaptureStore(path: string): Promise<StoreReading> {
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
  const data = applyEntries(snapshot, entries, { sortById: folding.length > 0 });
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
