// `listen --filter RULE` (repeatable; `filter` in the config file): which deliveries go to the app. A delivery
// must match every rule; one that does not is still verified, captured and answered 200 (so that the service
// does not send it again), and told as filtered with the rule that took it out (docs/listen.md, "Filters"). A
// replay is sent as asked, whatever the filters.
import type { IncomingHttpHeaders } from 'node:http';
import { OptionError } from '../errors.js';

/** What a rule reads of a delivery: its envelope parsed (null when not JSON), its headers and its query. */
export interface FilterFacts {
  json: unknown;
  headers: IncomingHttpHeaders;
  /** The path and query it came to. */
  url: string;
}

/** A rule, as given and as a test. */
export interface DeliveryFilter {
  rule: string;
  takes(facts: FilterFacts): boolean;
}

const EXAMPLES =
  "e.g. --filter 'type=punch.*', --filter 'data.employeeId=42', --filter 'header.x-tenant!=test', --filter 'data.note' (present), --filter '!data.note' (absent), --filter 'data.email~=@example\\.com$'";

/** The value at `path` of the delivery (`type`, `data.a.b`, `data.items[0].id`, `header.x`, `query.q`), or undefined. */
function valueAt(path: string, { json, headers, url }: FilterFacts): unknown {
  const [head, ...rest] = path.split('.');
  if ((head === 'header' || head === 'headers') && rest.length > 0) return headers[rest.join('.').toLowerCase()];
  if (head === 'query' && rest.length > 0)
    return new URL(url, 'http://x').searchParams.get(rest.join('.')) ?? undefined;
  let value: unknown = json;
  for (const step of path.replace(/\[(\d+)\]/g, '.$1').split('.')) {
    if (typeof value !== 'object' || value === null || !(step in value)) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}

const asText = (value: unknown) =>
  typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);

/** `punch.*` and `a?c` as anchored globs; a value without `*` or `?` compares whole. */
function matcher(pattern: string): (text: string) => boolean {
  if (!/[*?]/.test(pattern)) return (text) => text === pattern;
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  const glob = new RegExp(`^${source}$`, 's');
  return (text) => glob.test(text);
}

/** Parses one rule: PATH (present), !PATH (absent), PATH=VALUE, PATH!=VALUE (globs) or PATH~=REGEX. */
export function parseFilter(rule: string): DeliveryFilter {
  const given = rule.trim();
  const operator = /^([!]?)([A-Za-z_][\w.[\]-]*)(?:(!=|~=|=)(.*))?$/s.exec(given);
  if (!operator || (operator[1] === '!' && operator[3] !== undefined))
    throw new OptionError(
      `--filter ${JSON.stringify(rule)}: not a rule. A rule is a path with what it must be, ${EXAMPLES}.`,
    );
  const [, not, path, op, value = ''] = operator;
  const at = (facts: FilterFacts) => valueAt(path, facts);
  if (op === undefined) return { rule: given, takes: (f) => (at(f) !== undefined) !== (not === '!') };
  if (op === '~=') {
    let pattern: RegExp;
    try {
      pattern = new RegExp(value);
    } catch (error) {
      throw new OptionError(`--filter ${JSON.stringify(rule)}: ${(error as Error).message}. ${EXAMPLES}.`);
    }
    return { rule: given, takes: (f) => at(f) !== undefined && pattern.test(asText(at(f))) };
  }
  const matches = matcher(value);
  const equal = (f: FilterFacts) => at(f) !== undefined && matches(asText(at(f)));
  return { rule: given, takes: op === '=' ? equal : (f) => !equal(f) };
}

/** The rules given (each refused with what is wrong). */
export const parseFilters = (rules: readonly string[]): DeliveryFilter[] => rules.map(parseFilter);

/** The first rule a delivery does not match (what took it out), or null when it goes on to the app. */
export function filteredBy(filters: readonly DeliveryFilter[], facts: FilterFacts): string | null {
  for (const filter of filters) if (!filter.takes(facts)) return filter.rule;
  return null;
}
