import { BAD_PORT_WHY, isBadPort } from '../http/index.js';
import { parseSize } from '../size.js';
import { CliError, UsageError } from '../errors.js';
import { nextFreePort, portHolder } from './port-taken.js';
import { flushOutput, keepServingWithoutOutput } from './output.js';

/**
 * For a long-running command: resolves after SIGINT, SIGTERM or SIGHUP (its terminal window closed), once
 * `stop` has finished; a second signal exits at once. Its output closing does not stop it (see
 * dropOutputWhenClosed).
 */
export function onShutdown(command: string, stop: (signal: NodeJS.Signals) => Promise<void>): Promise<void> {
  keepServingWithoutOutput(command);
  return new Promise((resolve, reject) => {
    let stopping = false;
    const handler = (signal: NodeJS.Signals) => {
      if (stopping) {
        flushOutput();
        process.exit(1);
      }
      stopping = true;
      stop(signal).then(resolve, reject);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    // Node's default for SIGHUP is to end at once: listen would leave the endpoint it made registered.
    process.on('SIGHUP', handler);
  });
}

/** A repeatable flag's values, in the order given (commander's argParser). */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function parsePort(value: string, flag: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`${flag} must be a port number 0-65535 (got ${value}).`);
  return port;
}

/**
 * A port that a browser or fetch must reach (`who` says which): one of the Fetch standard's bad ports,
 * such as 6000, is refused here rather than failing later on every call.
 */
export function parseFetchablePort(value: string, flag: string, who: string): number {
  const port = parsePort(value, flag);
  if (isBadPort(port))
    throw new UsageError(`${flag} ${port}: ${who} cannot reach that port (${BAD_PORT_WHY}); pick another ${flag}.`);
  return port;
}

/** A size flag such as `64mb`, `512kb` or a number of bytes. */
export function parseSizeFlag(value: string, flag: string): number {
  try {
    return parseSize(value);
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`);
  }
}

export function parsePositiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive whole number (got ${value}).`);
  return n;
}

/** `--time-scale`: a positive number that multiplies the sandbox's retry delays. */
export function parseTimeScale(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`--time-scale must be a positive number (got ${value}); 0.01 turns 1 min into 0.6 s.`);
  return n;
}

/** Why a write was refused, by its error's code, whatever the file (clockhook's own or one the user named). */
const REFUSED: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
};

/**
 * A file or folder of clockhook's state that could not be made or written, said for people; null for
 * any other error. `what`: what `--db` moves elsewhere ("the store").
 */
export function fileFailure(error: unknown, what: string): CliError | null {
  const { code, path, syscall } = error as NodeJS.ErrnoException;
  if (!path || !syscall) return null;
  const reasons: Record<string, string> = Object.assign({}, REFUSED, { ENOSPC: 'the disk is full' });
  // EEXIST is mkdir's answer when a file stands where the folder should be.
  const throughFile = code === 'ENOTDIR' || (code === 'EEXIST' && syscall === 'mkdir');
  // ENOENT from mkdir with the folder above there: a file system that makes no folders, such as /proc.
  if (code === 'ENOENT' && syscall === 'mkdir') reasons.ENOENT = 'no folder can be made there';
  const reason = throughFile
    ? 'part of that path is a file, not a folder'
    : (reasons[code ?? ''] ?? (error as Error).message);
  const next =
    code === 'ENOSPC'
      ? 'clockhook needs a few MB free there: free some space, or run in a folder on another disk'
      : throughFile
        ? 'Give a path under a folder'
        : 'Run in a folder you can write to';
  return new CliError(`cannot write ${path}: ${reason}. ${next} (${what} can go elsewhere with --db).`);
}

/**
 * A server that could not listen, said for people: the port is taken, is not ours to use, or the
 * address is not this machine's. Null for any other error. `holder`: who likely holds the port.
 */
export async function bindFailure(
  error: unknown,
  host: string,
  port: number,
  holder: string,
): Promise<CliError | null> {
  const { code, syscall } = error as NodeJS.ErrnoException;
  if (syscall !== 'listen' && syscall !== 'bind' && syscall !== 'getaddrinfo') return null;
  if (code === 'EADDRINUSE') {
    const [who, next] = await Promise.all([portHolder(port), nextFreePort(port, host)]);
    const other = next === null ? '' : `--port ${next} (free now) or `;
    return new CliError(
      `port ${port} on ${host} is in use by ${who ?? `another program (${holder}?)`}. Stop it, or pick another: ${other}--port 0 (any free port).`,
    );
  }
  if (code === 'EACCES' || code === 'EPERM')
    return new CliError(`no permission to listen on port ${port}; use a port above 1024 with --port.`);
  return new CliError(
    `cannot listen on ${host} (${code}): it is not an address of this machine. Use --host 127.0.0.1 (this machine only), 0.0.0.0 (every interface) or one of its own addresses.`,
  );
}

/**
 * `listen` and `check` take the app's address as --forward-to, not as an argument. `clockhook listen 3000`
 * (ngrok's way of saying it) is told the spelling that works, instead of commander's "too many arguments".
 */
export function strayArgumentsError(
  command: string,
  args: readonly string[],
  forwardTo: string | undefined,
): UsageError {
  const given = args.join(' ');
  // A port, host:port or a URL; a lone word is more likely a mistyped command than a host name.
  const looksLikeApp =
    forwardTo === undefined && args.length === 1 && /^\d{1,5}(\/|$)|^[\w.-]+:\d|^https?:\/\//.test(given);
  return new UsageError(
    looksLikeApp
      ? `${command} takes your app's address as a flag: npx clockhook ${command} --forward-to ${given}`
      : `${command} takes no arguments (got ${JSON.stringify(given)}); see npx clockhook ${command} --help.`,
  );
}

/** An environment variable's value; an empty one counts as unset (`export CLOCKHOOK_SECRET=`). */
export function fromEnv(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}
