// The diff of two captures, without the page: each JSON path whose value differs, and each header. The
// page's Diff tab (diff.js) and clockhook mcp's diff_captures (src/mcp/) say the same with it.

const isObject = (value) => typeof value === 'object' && value !== null;

/** Every path where two JSON values differ: { path, before, after } (undefined where a side lacks it). */
export function jsonDiff(before, after, path = '') {
  if (isObject(before) && isObject(after) && Array.isArray(before) === Array.isArray(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key) =>
      jsonDiff(before[key], after[key], Array.isArray(before) ? `${path}[${key}]` : path ? `${path}.${key}` : key),
    );
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path: path || '(whole body)', before, after }];
}

/** The headers that differ, by name (lower-case, as stored). */
export function headerDiff(before, after) {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const text = (value) => (value === undefined ? undefined : [value].flat().join(', '));
  return names
    .map((name) => ({ path: name, before: text(before[name]), after: text(after[name]) }))
    .filter((row) => row.before !== row.after);
}
