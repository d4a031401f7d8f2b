import type { Capture, CaptureStore } from '../store/index.js';

/** Most matches one search returns: as many captures as a snapshot holds. */
export const SEARCH_LIMIT = 200;
/** Most bytes of bodies kept in files (over 16 KiB each) that one search reads. */
export const SEARCH_FILE_BUDGET = 64 * 1024 * 1024;

export interface SearchResult {
  query: string;
  /** The matches, newest first. */
  captures: Capture[];
  /** More captures matched than `captures` holds. */
  truncated: boolean;
  /** Some bodies kept in files were searched in their first 16 KiB only (the read budget ran out). */
  partial: boolean;
}

const holds = (text: string, needle: string) => text.toLowerCase().includes(needle);

/**
 * The captures whose body or event id holds `query`, case-insensitive: what the page's search box does
 * with the captures it holds, over the whole store, and over the whole of the bodies kept in files, of
 * which captures carry only the first 16 KiB.
 */
export async function searchCaptures(
  store: CaptureStore,
  query: string,
  { limit = SEARCH_LIMIT, fileBudget = SEARCH_FILE_BUDGET } = {},
): Promise<SearchResult> {
  const needle = query.trim().toLowerCase();
  const newestFirst = [...store.all()].reverse();
  const captures: Capture[] = [];
  let budget = fileBudget;
  let partial = false;
  for (const capture of newestFirst) {
    let found = holds(capture.envelope?.id ?? '', needle) || holds(capture.body, needle);
    if (!found && capture.bodyFile) {
      if (budget <= 0) {
        partial = true;
        continue;
      }
      // A file gone since (retention, Clear) is simply not searched.
      const bytes = await store.body(capture).catch(() => null);
      if (bytes) {
        budget -= bytes.length;
        found = holds(bytes.toString('utf8'), needle);
      }
    }
    if (!found) continue;
    if (captures.length === limit) return { query, captures, truncated: true, partial };
    captures.push(capture);
  }
  return { query, captures, truncated: false, partial };
}
