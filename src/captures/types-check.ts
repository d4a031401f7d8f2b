// `clockhook types --check`: whether the deliveries that came (captured, or a scenario's) fit the types a project
// committed. Each field path that moved is said once per event type, with the first capture it came in: a new
// field, a type changed, a field gone.
import type { Declared } from './declared.js';

/** One way the deliveries of a type moved away from the types. */
export interface Moved {
  /** The event type. */
  type: string;
  /** The field's path, from `data` (`data.hours`, `data.items[].id`). */
  path: string;
  change: 'new field' | 'type changed' | 'field gone' | 'type not declared';
  /** What it is now, against what the types say. */
  words: string;
  /** The first delivery it came in (a capture id, or a scenario's `#n`), and how many had it. */
  from: string;
  count: number;
}

/** A delivery to hold to the types: its event type, its data, and where it came from. */
export interface Checked {
  type: string;
  data: unknown;
  from: string;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function fits(value: unknown, type: Declared): boolean {
  return differences(value, type, '').length === 0;
}

function said(type: Declared): string {
  switch (type.kind) {
    case 'union':
      return type.of.map(said).join(' | ');
    case 'literal':
      return JSON.stringify(type.value);
    case 'array':
      return `${said(type.items)}[]`;
    case 'any':
      return 'unknown';
    default:
      return type.kind;
  }
}

type Found = Pick<Moved, 'path' | 'change' | 'words'>;

/** How `value` differs from `type`, field by field (nothing when it fits). */
function differences(value: unknown, type: Declared, path: string): Found[] {
  if (type.kind === 'any') return [];
  if (type.kind === 'union') {
    if (type.of.some((member) => fits(value, member))) return [];
    // Held to the member of its own kind, when there is one: the fields that moved inside it, not the whole.
    const same = type.of.find((member) => member.kind === kindOf(value));
    if (same) return differences(value, same, path);
  }
  if (type.kind === 'literal')
    return value === type.value
      ? []
      : [{ path, change: 'type changed', words: `${JSON.stringify(value)}, the types say ${said(type)}` }];
  if (type.kind !== kindOf(value))
    return [{ path, change: 'type changed', words: `${kindOf(value)}, the types say ${said(type)}` }];
  if (type.kind === 'array') return (value as unknown[]).flatMap((item) => differences(item, type.items, `${path}[]`));
  if (type.kind === 'object' && type.fields)
    return objectDifferences(value as Record<string, unknown>, type.fields, path);
  return [];
}

function objectDifferences(
  value: Record<string, unknown>,
  fields: Map<string, { type: Declared; optional: boolean }>,
  path: string,
): Found[] {
  const found: Found[] = [];
  for (const [name, field] of Object.entries(value)) {
    const at = `${path}.${name}`;
    const declared = fields.get(name);
    if (!declared) found.push({ path: at, change: 'new field', words: `a new field (${kindOf(field)})` });
    else found.push(...differences(field, declared.type, at));
  }
  for (const [name, field] of fields)
    if (!field.optional && !(name in value))
      found.push({
        path: `${path}.${name}`,
        change: 'field gone',
        words: `gone, the types require it (${said(field.type)})`,
      });
  return found;
}

/** What moved in `deliveries` against `declared` (by event type), each once with its first delivery. */
export function checkAgainstTypes(deliveries: readonly Checked[], declared: ReadonlyMap<string, Declared>): Moved[] {
  const moved = new Map<string, Moved>();
  const note = (type: string, found: Found, from: string) => {
    const key = `${type}\u0000${found.path}\u0000${found.change}`;
    const seen = moved.get(key);
    if (seen) seen.count += 1;
    else moved.set(key, { type, ...found, from, count: 1 });
  };
  for (const { type, data, from } of deliveries) {
    const types = declared.get(type);
    if (!types)
      note(type, { path: 'data', change: 'type not declared', words: `no type for ${type} in the file` }, from);
    else for (const found of differences(data, types, 'data')) note(type, found, from);
  }
  return [...moved.values()];
}
