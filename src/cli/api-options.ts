import { dirname, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { ApiClient, apiBaseProblem } from '../api/index.js';
import { isDomainEventType, unknownTypeWords } from '../contract/index.js';
import { sameBase } from '../listen/endpoint-records.js';
import { CliError, UsageError } from '../errors.js';
import { fromEnv } from './process.js';
import { DEFAULT_DISCOVERY_PATH, findRunningSandbox, readListenDiscovery, STATE_DIR } from '../folder/index.js';

export interface ApiFlags {
  apiKey?: string;
  apiBase?: string;
  json?: boolean;
}

export interface ResolvedApi {
  client: ApiClient;
  apiBase: string;
  /** True when the key and base came from a running sandbox's discovery file. */
  fromSandbox: boolean;
  /** What the contract's retry delays are multiplied by: the sandbox's `--time-scale`, else 1. */
  timeScale: number;
}

/** Adds the flags every API command shares. */
export function withApiOptions(command: Command): Command {
  return command
    .option('--api-key <key>', 'API key (default: $CLOCKHOOK_API_KEY, else the running sandbox of this folder)')
    .option('--api-base <url>', 'API base URL (default: $CLOCKHOOK_API_BASE, else the running sandbox of this folder)')
    .option('--json', 'print raw JSON for scripts');
}

/** Where the key and base come from: flags, then the environment, then `.clockhook/sandbox.json`. */
export async function resolveApi(flags: ApiFlags, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedApi> {
  const apiKey = flags.apiKey ?? fromEnv('CLOCKHOOK_API_KEY', env);
  const apiBase = flags.apiBase ?? fromEnv('CLOCKHOOK_API_BASE', env);
  const problem = apiBase === undefined ? null : apiBaseProblem(apiBase);
  if (problem)
    throw new UsageError(
      `${flags.apiBase === undefined ? 'CLOCKHOOK_API_BASE' : '--api-base'} ${problem}: give the service's API base URL, e.g. https://api.example.com.`,
    );
  if (apiKey) {
    if (!apiBase) {
      throw new UsageError(
        "an API key was given without a base URL: pass --api-base or set CLOCKHOOK_API_BASE to the service's API URL.",
      );
    }
    return { client: makeClient(apiBase, apiKey), apiBase, fromSandbox: false, timeScale: 1 };
  }
  const sandbox = await findRunningSandbox(DEFAULT_DISCOVERY_PATH);
  if (!sandbox && (await readListenDiscovery())?.offline)
    throw new CliError(
      'no API key, and the listen running in this folder is offline: it was given a secret (--secret or $CLOCKHOOK_SECRET) without an API key, so it started no sandbox. Start it again without the secret to have one, or pass --api-key and --api-base.',
    );
  if (!sandbox) {
    const above = await stateAbove('sandbox.json', async (path) => (await findRunningSandbox(path)) !== null);
    throw new CliError(
      above
        ? `no API key and no running sandbox in this folder (.clockhook/sandbox.json), but one runs for ${above}: run this there (cd ${relative(process.cwd(), above)}), where listen or the sandbox was started, or pass --api-key and --api-base.`
        : 'no API key and no running sandbox in this folder (.clockhook/sandbox.json). Start one with "npx clockhook sandbox" (or "npx clockhook listen") in this folder, or pass --api-key and --api-base (or set CLOCKHOOK_API_KEY and CLOCKHOOK_API_BASE).',
    );
  }
  if (apiBase && !sameBase(apiBase, sandbox.apiBase)) {
    throw new UsageError(
      `--api-base ${apiBase} was given without a key; the key on file is for the sandbox at ${sandbox.apiBase}. Pass --api-key too.`,
    );
  }
  return {
    client: makeClient(sandbox.apiBase, sandbox.apiKey),
    apiBase: sandbox.apiBase,
    fromSandbox: true,
    timeScale: sandbox.timeScale ?? 1,
  };
}

/**
 * The nearest folder above this one whose `.clockhook/<file>` passes `found`, or null. The state is per
 * folder, where listen runs; a command run from a subfolder of the project (`src/`) is told where it is,
 * rather than only that this folder has none. It is not used from there: that folder may be another
 * project's.
 */
export async function stateAbove(
  file: string,
  found: (path: string) => Promise<boolean>,
  from = process.cwd(),
): Promise<string | null> {
  for (let dir = dirname(resolve(from)); ; dir = dirname(dir)) {
    if (await found(join(dir, STATE_DIR, file))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

function makeClient(baseUrl: string, apiKey: string): ApiClient {
  try {
    return new ApiClient({ baseUrl, apiKey });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * `a,b` or `*` for an endpoint's subscription: each one of the service's types. Another is refused here, as
 * every surface refuses it (unknownTypeWords), rather than by the API in an HTTP line.
 */
export function parseSubscription(value: string, flag: string): string[] {
  const types = parseEventList(value);
  const unknown = types.find((type) => type !== '*' && !isDomainEventType(type));
  if (unknown !== undefined) throw new UsageError(`${flag}: ${unknownTypeWords(unknown)}.`);
  return types;
}

/** Parses `a,b` or `*` into a subscription list. */
export function parseEventList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
