import { stat } from 'node:fs/promises';
import type { Logger } from '../logger.js';
import { type JournalEntry, readJournalEntries } from './journal-entries.js';
import { parseSnapshot, SNAPSHOT_HEADER, type StoreData } from './snapshot.js';
import { assertOwnFile, ForeignPathError, inStateDir, moveAside, startsWith } from '../folder/index.js';

const missing = (error: NodeJS.ErrnoException) => {
  if (error.code === 'ENOENT') return null;
  throw error;
};

/**
 * The store's snapshot as the journal's adapter opens it, and its size: none (null, 0) when there is none. A
 * corrupt one is moved aside (never overwritten) with a warning, and read as none.
 */
export async function readSnapshotFile(
  path: string,
  logger: Logger,
  now: () => number,
): Promise<{ data: StoreData | null; bytes: number }> {
  const found = await stat(path).catch(missing);
  if (!found) return { data: null, bytes: 0 };
  const data = await parseSnapshot(path);
  if (data) return { data, bytes: found.size };
  await assertOwnFile(path, SNAPSHOT_HEADER, 'a clockhook capture store');
  const aside = await moveAside(path, now());
  logger.warn(
    `The capture store ${path} is corrupt; moved it to ${aside} (nothing was overwritten) and started a new one.`,
  );
  return { data: null, bytes: 0 };
}

/** The entries of a journal (the store's, or one being folded) and its size; null entries when there is none. */
export async function readJournalFile(
  path: string,
  logger: Logger,
  now: () => number,
): Promise<{ entries: JournalEntry[] | null; bytes: number }> {
  const found = await stat(path).catch(missing);
  if (!found) return { entries: null, bytes: 0 };
  // Its lines are JSON objects: any other file by that name, outside .clockhook, is not clockhook's to move or empty.
  if (found.size > 0 && !inStateDir(path) && !(await startsWith(path, '{'))) {
    throw new ForeignPathError(
      `${path} is not a clockhook capture journal: it does not begin as one, so it is left as it is. Give --db another path.`,
    );
  }
  const { entries, tornAt, damaged } = await readJournalEntries(path);
  if (damaged) {
    const aside = await moveAside(path, now());
    logger.warn(`The capture journal ${path} is damaged at line ${tornAt}; moved it to ${aside}.`);
  }
  return { entries, bytes: found.size };
}
