import { OptionError } from '../errors.js';
import { sampleData } from './samples.js';
/**
 * Changes to an event's `data` by dot path, as `trigger --set` and `--unset` take them: `employee.name`,
 * `tags[0]`, `shifts[1].start`. A path that does not exist is made (an object, or an array when the next
 * step is `[n]`).
 */
export type PathStep = string | number;

/** The steps of a dot path; throws a TypeError naming the path when it is not one. */
export function parsePath(path: string): PathStep[] {
  const steps: PathStep[] = [];
  const pattern = /([^.[\]]+)|\[(\d+)\]/gy;
  let at = 0;
  while (at < path.length) {
    if (steps.length > 0 && path[at] === '.') at += 1;
    pattern.lastIndex = at;
    const match = pattern.exec(path);
    if (!match) throw new OptionError(`${JSON.stringify(path)} is not a path: write it as employee.name or tags[0].`);
    steps.push(match[1] ?? Number(match[2]));
    at = pattern.lastIndex;
  }
  if (steps.length === 0) throw new OptionError('an empty path: write it as employee.name or tags[0].');
  return steps;
}

/** A `--set` value: JSON when it parses (`24.5`, `false`, `["a","b"]`), else the text as a string. */
export function parseSetValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type Container = Record<string | number, unknown>;

/** Sets `value` at `path` in `target` (changed in place), making what is missing on the way. */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const steps = parsePath(path);
  let node = target as Container;
  for (const [i, step] of steps.slice(0, -1).entries()) {
    const next = node[step];
    if (typeof next !== 'object' || next === null) node[step] = typeof steps[i + 1] === 'number' ? [] : {};
    node = node[step] as Container;
  }
  node[steps[steps.length - 1]] = value;
}

/** Removes what is at `path`; false when there is nothing there. */
export function unsetPath(target: Record<string, unknown>, path: string): boolean {
  const steps = parsePath(path);
  let node: unknown = target;
  for (const step of steps.slice(0, -1)) {
    if (typeof node !== 'object' || node === null) return false;
    node = (node as Container)[step];
  }
  const last = steps[steps.length - 1];
  if (typeof node !== 'object' || node === null || !(last in node)) return false;
  if (Array.isArray(node) && typeof last === 'number') node.splice(last, 1);
  else delete (node as Container)[last];
  return true;
}

/**
 * An event's data as `trigger`, the MCP tool and the testing library make it: `data` (a copy of the type's sample
 * when none is given), changed by each of `set` in turn, then each of `unset`. `missing`: a path `unset` names
 * that the data does not have (each surface says so in its own words: a flag, a tool's argument).
 */
export function changedData(
  type: string,
  {
    data,
    set = [],
    unset = [],
  }: { data?: Record<string, unknown>; set?: [path: string, value: unknown][]; unset?: string[] },
): { data: Record<string, unknown> } | { missing: string } {
  const changed = structuredClone(data ?? sampleData(type));
  for (const [path, value] of set) setPath(changed, inData(path), value);
  const missing = unset.find((path) => !unsetPath(changed, inData(path)));
  return missing === undefined ? { data: changed } : { missing };
}

/**
 * A path into an event's data, as `set` and `unset` take it: relative to `data`, with a leading `data.` (the
 * envelope's name for it, as a user reads the delivery) taken off once, so that it is never made twice.
 */
const inData = (path: string): string => (path.startsWith('data.') ? path.slice('data.'.length) : path);
