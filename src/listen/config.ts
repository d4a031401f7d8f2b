import { readFile } from 'node:fs/promises';
import { editDistance } from '../contract/index.js';
import { parseRoute, type RouteOption, routeSpecOf } from '../listener/routes.js';
import { normalizeForwardTarget } from '../listener/target.js';
import { parseFilter } from '../listener/filters.js';
import { UsageError } from '../errors.js';
import { jsonErrorAt } from './json-error.js';
import { whyUnreadable } from '../unreadable.js';

/** `clockhook.config.json`'s `listen` part, as the schema shipped beside it (clockhook.config.schema.json) says. */
export interface ListenConfigFile {
  port?: number;
  path?: string;
  /** Routes: `[TYPES=]TARGET`, or `{ "to": "[TYPES=]TARGET", "filter": [rules] }` with filters of its own. */
  forwardTo?: RouteOption[];
  filter?: string[];
  /** The app's start command, run by listen once it is ready (as `listen -- <command>`), through the shell. */
  command?: string;
  events?: string[];
  inspectorPort?: number;
  sandboxPort?: number;
  maxCaptures?: number;
  timeout?: number;
  tolerance?: number;
  db?: string;
  relay?: string;
  publicUrl?: string;
  waitForApp?: number;
  faults?: string;
  faultsSeed?: number;
}

export const CONFIG_FILE = 'clockhook.config.json';

/** A config file that cannot be used: exit 2, naming the file, the key path and what is allowed. */
export class ConfigError extends UsageError {
  override readonly name = 'ConfigError';
}

type Check = (value: unknown) => string | null;
const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER): Check =>
  (v) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max
      ? null
      : `an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}`;
const text: Check = (v) => (typeof v === 'string' && v.length > 0 ? null : 'a non-empty string');
const strings: Check = (v) =>
  Array.isArray(v) && v.length > 0 && v.every((item) => typeof item === 'string' && item.length > 0)
    ? null
    : 'a non-empty list of strings';

/** A route: `[TYPES=]TARGET`, or `{ "to": …, "filter": [rules] }`. */
function isRoute(item: unknown): boolean {
  if (typeof item === 'string') return item.length > 0;
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
  const { to, filter, ...other } = item as { to?: unknown; filter?: unknown };
  return Object.keys(other).length === 0 && text(to) === null && (filter === undefined || strings(filter) === null);
}
const routes: Check = (v) =>
  Array.isArray(v) && v.length > 0 && v.every(isRoute)
    ? null
    : 'a non-empty list of routes, each "[TYPES=]TARGET" or { "to": "[TYPES=]TARGET", "filter": ["rule", …] }';

/** Each key of `listen` with what it must be (kept equal to the schema's by a test). */
export const LISTEN_KEYS: Record<keyof ListenConfigFile | '$comment', Check> = {
  $comment: (v) => (typeof v === 'string' ? null : 'a string'),
  port: integer(0, 65535),
  path: (v) => (typeof v === 'string' && v.startsWith('/') ? null : 'a path beginning with /'),
  forwardTo: routes,
  filter: strings,
  command: text,
  events: strings,
  inspectorPort: integer(0, 65535),
  sandboxPort: integer(0, 65535),
  maxCaptures: integer(1),
  timeout: integer(1),
  tolerance: (v) => (typeof v === 'number' && v >= 0 ? null : 'a number of seconds, 0 or more'),
  db: text,
  relay: text,
  publicUrl: text,
  waitForApp: (v) => (typeof v === 'number' && v >= 0 && v < 30 ? null : 'a number of seconds from 0, under 30'),
  faults: text,
  faultsSeed: integer(0, 4_294_967_295),
};

/** Keys people put in config files that clockhook reads from elsewhere, with where. */
const NOT_HERE: Record<string, string> = {
  secret: 'the secret comes from $CLOCKHOOK_SECRET or the endpoint listen registered (npx clockhook secret)',
  apiKey: 'the API key comes from $CLOCKHOOK_API_KEY',
  apiBase: 'the API base comes from $CLOCKHOOK_API_BASE',
};

/** Edits between two key names, whatever their case: `forwardto` is forwardTo mistyped. */
const distance = (a: string, b: string) => editDistance(a.toLowerCase(), b.toLowerCase());

function unknownKey(file: string, path: string, key: string, allowed: string[]): ConfigError {
  if (NOT_HERE[key]) return new ConfigError(`${file}: ${path}${key} is not read from the file: ${NOT_HERE[key]}.`);
  const near = allowed.filter((k) => !k.startsWith('$')).sort((a, b) => distance(key, a) - distance(key, b))[0];
  const guess =
    near && distance(key, near) <= Math.max(2, Math.floor(key.length / 3)) ? ` (did you mean ${near}?)` : '';
  return new ConfigError(
    `${file}: unknown key ${path}${key}${guess}. Allowed: ${allowed.filter((k) => !k.startsWith('$')).join(', ')}.`,
  );
}

/** The `listen` part of a parsed config file, checked key by key. */
export function checkConfig(value: unknown, file: string): ListenConfigFile {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(
      `${file}: the file holds ${JSON.stringify(value)?.slice(0, 40)}; it must be an object, such as { "listen": { "forwardTo": ["3000"] } }.`,
    );
  for (const key of Object.keys(value))
    if (!['$schema', '$comment', 'listen'].includes(key)) throw unknownKey(file, '', key, ['listen']);
  const listen = (value as { listen?: unknown }).listen ?? {};
  if (typeof listen !== 'object' || listen === null || Array.isArray(listen))
    throw new ConfigError(`${file}: listen must be an object of listen's settings, such as { "forwardTo": ["3000"] }.`);
  for (const [key, item] of Object.entries(listen)) {
    const check = LISTEN_KEYS[key as keyof typeof LISTEN_KEYS];
    if (!check) throw unknownKey(file, 'listen.', key, Object.keys(LISTEN_KEYS));
    const wanted = check(item);
    if (wanted) throw new ConfigError(`${file}: listen.${key} must be ${wanted} (it is ${JSON.stringify(item)}).`);
  }
  const { $comment: _comment, ...settings } = listen as ListenConfigFile & { $comment?: string };
  for (const [i, route] of (settings.forwardTo ?? []).entries()) {
    try {
      normalizeForwardTarget(parseRoute(routeSpecOf(route)).target);
      for (const rule of typeof route === 'string' ? [] : (route.filter ?? [])) parseFilter(rule);
    } catch (error) {
      throw new ConfigError(
        `${file}: listen.forwardTo[${i}]: ${(error as Error).message.replace(/^--forward-to (\S+: )?/, '')}`,
      );
    }
  }
  for (const [i, rule] of (settings.filter ?? []).entries()) {
    try {
      parseFilter(rule);
    } catch (error) {
      throw new ConfigError(`${file}: listen.filter[${i}]: ${(error as Error).message.replace(/^--filter /, '')}`);
    }
  }
  return settings;
}

/** Reads a config file: null when `optional` and there is none; a ConfigError for any other trouble. */
export async function readConfigFile(
  file: string,
  { optional }: { optional: boolean },
): Promise<ListenConfigFile | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && optional) return null;
    throw new ConfigError(
      `cannot read the config file ${file}: ${whyUnreadable(error)}. Give the path of a ${CONFIG_FILE} (npx clockhook init writes one).`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError((await jsonErrorAt(file, text)) ?? `${file} is not valid JSON: ${(error as Error).message}.`);
  }
  return checkConfig(value, file);
}

/** The starting file `clockhook init` writes. */
/** A starting config file (`clockhook init`), for an app at `forwardTo` with listen on `port`. */
export function startingConfig({ forwardTo = ['3000'], port = 4300 }: { forwardTo?: string[]; port?: number } = {}) {
  const listen = {
    $comment: 'forwardTo: one route per entry, [TYPES=]TARGET; the first whose types take a delivery forwards it.',
    ...{ port, path: '/', forwardTo, events: ['*'] },
  };
  const config = {
    $schema: './node_modules/clockhook/clockhook.config.schema.json',
    $comment:
      'How this project receives webhooks: `npx clockhook listen` with no flags reads this; a flag wins over it. Secrets and API keys do not go here: they come from the environment or .clockhook/.',
    listen,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
