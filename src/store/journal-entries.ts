import type { Capture } from './capture.js';
import { readLines, type StoreData } from './snapshot.js';

/** One line of the journal: a new or changed capture, changed fields, or captures removed (a clear). */
export type JournalEntry =
  | { op: 'put'; capture: Capture }
  /** Changed fields only: a forward result must not write the whole capture (its body) again. */
  | { op: 'patch'; id: string; patch: Partial<Capture> }
  | { op: 'delete'; ids: string[] };

/**
 * The entries of a journal file. A torn last line is a write a crash cut short (or, read while listen
 * runs, one being written): it was never acknowledged, and is left out. A torn line with more after it
 * is damage (`damaged`, at line `tornAt`); the entries before it are returned.
 */
export async function readJournalEntries(
  path: string,
): Promise<{ entries: JournalEntry[]; tornAt: number | null; damaged: boolean }> {
  const entries: JournalEntry[] = [];
  let number = 0;
  let tornAt: number | null = null;
  for await (const line of readLines(path)) {
    number += 1;
    if (line === '') continue;
    if (tornAt !== null) return { entries, tornAt, damaged: true };
    try {
      entries.push(JSON.parse(line) as JournalEntry);
    } catch {
      tornAt = number;
    }
  }
  return { entries, tornAt, damaged: false };
}

/**
 * The store a snapshot and the journal entries after it make, or null when there is neither.
 * `sortById`: after a crash between a fold's snapshot and the removal of its journal, that journal is
 * replayed over a snapshot that holds it; every change comes out the same, but a capture retention dropped
 * meanwhile (it writes no entry) comes back at the end, and sorting by id (ids sort by arrival) puts it
 * back first in line, where retention drops it again.
 */
export function applyEntries(
  snapshot: StoreData | null,
  entries: JournalEntry[],
  { sortById = false } = {},
): StoreData | null {
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
      if (index !== undefined)
        data.captures[index] = Object.assign({}, data.captures[index], entry.patch, { id: entry.id });
    } else {
      const gone = new Set(entry.ids);
      data.captures = data.captures.filter((c) => !gone.has(c.id));
      byId.clear();
      for (const [i, c] of data.captures.entries()) byId.set(c.id, i);
    }
  }
  if (sortById) data.captures.sort((a: Capture, b: Capture) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return data;
}
