// The types a project committed (written by `clockhook types`, TypeScript or JSON Schema), read back as the
// shape each event type's `data` is declared to have: what `clockhook types --check` holds the deliveries to.
// Only what `clockhook types` writes is read (the primitive kinds, object literals, arrays, unions, `unknown`,
// `Record<string, unknown>`), with any comments a person added; anything else is refused naming the line.
import { UsageError } from '../errors.js';

export type Declared =
  | { kind: 'any' }
  | { kind: 'string' | 'number' | 'boolean' | 'null' }
  | { kind: 'literal'; value: string }
  | { kind: 'union'; of: Declared[] }
  | { kind: 'array'; items: Declared }
  /** fields null: any object (`Record<string, unknown>`). */
  | { kind: 'object'; fields: Map<string, { type: Declared; optional: boolean }> | null };

/** The tokens of the subset: words, quoted names and literals, punctuation; comments and spaces dropped. */
function tokensOf(text: string): { token: string; line: number }[] {
  const tokens: { token: string; line: number }[] = [];
  const pattern = /\/\*[\s\S]*?\*\/|\/\/[^\n]*|\s+|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$.]*|\d+|[^\s]/g;
  let line = 1;
  for (const [token] of text.matchAll(pattern)) {
    if (!/^(\s|\/\/|\/\*)/.test(token)) tokens.push({ token, line });
    line += token.split('\n').length - 1;
  }
  return tokens;
}

/** A reader of one file's tokens, refusing what it does not expect with the file and line. */
class Reader {
  #at = 0;
  constructor(
    private readonly tokens: { token: string; line: number }[],
    private readonly file: string,
  ) {}

  peek(ahead = 0): string | undefined {
    return this.tokens[this.#at + ahead]?.token;
  }
  next(): string {
    const token = this.peek();
    if (token === undefined) throw this.refuse('the file ends here');
    this.#at += 1;
    return token;
  }
  expect(token: string): void {
    const got = this.next();
    if (got !== token) {
      this.#at -= 1;
      throw this.refuse(`"${token}" was expected, not "${got}"`);
    }
  }
  refuse(why: string): UsageError {
    const line = this.tokens[Math.min(this.#at, this.tokens.length - 1)]?.line ?? 1;
    return new UsageError(
      `${this.file}:${line}: ${why}. types --check reads the types as clockhook types writes them: write them again (npx clockhook types -o ${this.file}), or edit them within that form.`,
    );
  }
  done(): boolean {
    return this.#at >= this.tokens.length;
  }
}

const unquote = (token: string) => (/^['"]/.test(token) ? JSON.parse(`"${token.slice(1, -1)}"`) : token) as string;

function union(r: Reader): Declared {
  const of = [postfix(r)];
  while (r.peek() === '|') {
    r.next();
    of.push(postfix(r));
  }
  return of.length === 1 ? of[0] : { kind: 'union', of };
}

function postfix(r: Reader): Declared {
  let type = primary(r);
  while (r.peek() === '[' && r.peek(1) === ']') {
    r.next();
    r.next();
    type = { kind: 'array', items: type };
  }
  return type;
}

function primary(r: Reader): Declared {
  const token = r.next();
  if (token === 'string' || token === 'number' || token === 'boolean' || token === 'null') return { kind: token };
  if (token === 'unknown' || token === 'any') return { kind: 'any' };
  if (/^['"]/.test(token)) return { kind: 'literal', value: unquote(token) };
  if (token === '(') {
    const inner = union(r);
    r.expect(')');
    return inner;
  }
  if (token === 'Record') {
    for (const part of ['<', 'string', ',', 'unknown', '>']) r.expect(part);
    return { kind: 'object', fields: null };
  }
  if (token === '{') return objectBody(r);
  throw r.refuse(`"${token}" is not a type types --check reads`);
}

function objectBody(r: Reader): Declared {
  const fields = new Map<string, { type: Declared; optional: boolean }>();
  while (r.peek() !== '}') {
    const name = unquote(r.next());
    const optional = r.peek() === '?';
    if (optional) r.next();
    r.expect(':');
    fields.set(name, { type: union(r), optional });
    if (r.peek() === ';' || r.peek() === ',') r.next();
  }
  r.expect('}');
  return { kind: 'object', fields };
}

/** Each event type's declared `data`, from TypeScript written by `clockhook types`. */
function fromTypeScript(text: string, file: string): Map<string, Declared> {
  const r = new Reader(tokensOf(text), file);
  const declared = new Map<string, Declared>();
  while (!r.done()) {
    // export type XEvent = Envelope<'type.name', DATA>;  (anything else is passed over)
    if (r.peek() === 'type' && r.peek(2) === '=' && r.peek(3) === 'Envelope' && r.peek(4) === '<') {
      for (let i = 0; i < 5; i++) r.next();
      const type = unquote(r.next());
      r.expect(',');
      declared.set(type, union(r));
      r.expect('>');
    } else r.next();
  }
  return declared;
}

/** A JSON Schema (draft-07, as `clockhook types --format json-schema` writes it) as a declared type. */
function fromSchema(schema: Record<string, any>): Declared {
  if (schema.const !== undefined) return { kind: 'literal', value: String(schema.const) };
  const kinds: string[] = schema.type === undefined ? [] : [schema.type].flat();
  if (kinds.length === 0) return { kind: 'any' };
  const of = kinds.map((kind): Declared => {
    if (kind === 'integer') return { kind: 'number' };
    if (kind === 'array') return { kind: 'array', items: fromSchema(schema.items ?? {}) };
    if (kind !== 'object') return { kind } as Declared;
    if (!schema.properties) return { kind: 'object', fields: null };
    const required = new Set<string>(schema.required ?? []);
    const fields = new Map(
      Object.entries(schema.properties as Record<string, any>).map(([name, field]) => [
        name,
        { type: fromSchema(field), optional: !required.has(name) },
      ]),
    );
    return { kind: 'object', fields };
  });
  return of.length === 1 ? of[0] : { kind: 'union', of };
}

/** Each event type's declared `data`, from a file written by `clockhook types` (.ts, or JSON Schema). */
export function readDeclared(text: string, file: string): Map<string, Declared> {
  if (!file.endsWith('.json')) return fromTypeScript(text, file);
  let schema: Record<string, any>;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}.`);
  }
  const declared = new Map<string, Declared>();
  for (const definition of Object.values((schema.definitions ?? {}) as Record<string, any>)) {
    const type = definition?.properties?.type?.const;
    if (typeof type === 'string') declared.set(type, fromSchema(definition.properties.data ?? {}));
  }
  return declared;
}
