// The shape of JSON values seen so far: which kinds each place held, which fields an object had in every
// value and which in some. `clockhook types` writes types from it; listen tells a delivery whose shape
// differs from what earlier deliveries of its type had (drift). Pure: no I/O.

/** A kind of JSON value. An integer is a number. */
export type ShapeKind = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

/** What the values seen at one place had. */
export interface Shape {
  /** Values seen here. */
  seen: number;
  kinds: Set<ShapeKind>;
  /** For objects: each field's shape (its `seen` against this shape's `objects`: fewer means optional). */
  fields: Map<string, Shape>;
  /** Objects seen here. */
  objects: number;
  /** For arrays: the shape of their items. */
  items: Shape | null;
}

/** Fields an object's shape keeps at most. */
const MOST_FIELDS = 200;
/** Levels of nesting a shape follows. */
const MOST_DEPTH = 32;

export const emptyShape = (): Shape => ({ seen: 0, kinds: new Set(), fields: new Map(), objects: 0, items: null });

function kindOf(value: unknown): ShapeKind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const kind = typeof value;
  return kind === 'string' || kind === 'number' || kind === 'boolean' ? kind : 'object';
}

/** A field may be left out: some values of the object it is in did not have it. */
export const isOptional = (field: Shape, parent: Shape) => field.seen < parent.objects;

/**
 * How `value` differs from what `shape` saw before it (nothing the first time: there is nothing to differ
 * from), then `value` added to `shape`. Each difference is a path and what changed: `data.note: new field`,
 * `data.hours: string, was number`, `data.project: gone (every earlier one had it)`.
 */
export function addToShape(shape: Shape, value: unknown, path = ''): string[] {
  const changes: string[] = [];
  addAt(shape, value, path, shape.seen > 0, 0, changes);
  return changes;
}

// One list of changes for a whole value, passed down, not a list per field spread into its parent's: listen
// walks every delivery's data.
function addAt(shape: Shape, value: unknown, path: string, compare: boolean, depth: number, changes: string[]): void {
  const kind = kindOf(value);
  if (compare && !shape.kinds.has(kind))
    changes.push(`${path || '(the value)'}: ${kind}, was ${[...shape.kinds].join(' | ')}`);
  shape.seen += 1;
  shape.kinds.add(kind);
  // Deeper than MOST_DEPTH, only the kind is kept: a payload nested 10,000 levels must not exhaust the stack.
  if (depth >= MOST_DEPTH) return;
  if (kind === 'object') addObject(shape, value as Record<string, unknown>, path, compare, depth, changes);
  if (kind === 'array') {
    const before = compare && shape.items !== null && shape.items.seen > 0;
    shape.items ??= emptyShape();
    for (const item of value as unknown[]) addAt(shape.items, item, `${path}[]`, before, depth + 1, changes);
  }
}

function addObject(
  shape: Shape,
  object: Record<string, unknown>,
  path: string,
  compare: boolean,
  depth: number,
  changes: string[],
): void {
  const before = compare && shape.objects > 0;
  if (before)
    for (const [name, field] of shape.fields)
      if (!(name in object) && field.seen === shape.objects)
        changes.push(`${join(path, name)}: gone (every earlier one had it)`);
  shape.objects += 1;
  for (const name in object) {
    if (!Object.hasOwn(object, name)) continue;
    const known = shape.fields.get(name);
    // An object keyed by ids (a map, not a record) would grow without end: past MOST_FIELDS, no more are kept.
    if (!known && shape.fields.size >= MOST_FIELDS) continue;
    if (!known && before) changes.push(`${join(path, name)}: new field`);
    const field = known ?? emptyShape();
    if (!known) shape.fields.set(name, field);
    // Inside a new field, nothing more to say: the field is the news.
    addAt(field, object[name], join(path, name), before && known !== undefined, depth + 1, changes);
  }
}

const join = (path: string, name: string) => (path ? `${path}.${name}` : name);
