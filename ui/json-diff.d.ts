// Types of ui/json-diff.js for the TypeScript of src/mcp/, which imports it; the page loads the .js itself.

export interface DiffRow {
  path: string;
  before: unknown;
  after: unknown;
}

/** Every path where two JSON values differ (undefined where a side lacks it). */
export function jsonDiff(before: unknown, after: unknown, path?: string): DiffRow[];

/** The headers that differ, by name (lower-case, as stored). */
export function headerDiff(
  before: Record<string, string | string[]>,
  after: Record<string, string | string[]>,
): { path: string; before: string | undefined; after: string | undefined }[];
