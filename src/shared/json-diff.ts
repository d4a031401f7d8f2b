// The diff of two captures, without the page: each JSON path whose value differs, and each header. The page's
// Diff tab and clockhook mcp's diff_captures say the same with it. Pure, with no import: the inspector serves
// its build to the page as /shared/json-diff.js.

export interface DiffRow {
  path: string;
  before: unknown;
  after: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** Every path where two JSON values differ: { path, before, after } (undefined where a side lacks it). */
export function jsonDiff(before: unknown, after: unknown, path = ''): DiffRow[] {
  if (isObject(before) && isObject(after) && Array.isArray(before) === Array.isArray(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key) =>
      jsonDiff(before[key], after[key], Array.isArray(before) ? `${path}[${key}]` : path ? `${path}.${key}` : key),
    );
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path: path || '(whole body)', before, after }];
}

/** The headers that differ, by name (lower-case, as stored). */
export function headerDiff(
  before: Record<string, string | string[]>,
  after: Record<string, string | string[]>,
): { path: string; before: string | undefined; after: string | undefined }[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const text = (value: string | string[] | undefined) => (value === undefined ? undefined : [value].flat().join(', '));
  return names
    .map((name) => ({ path: name, before: text(before[name]), after: text(after[name]) }))
    .filter((row) => row.before !== row.after);
}
