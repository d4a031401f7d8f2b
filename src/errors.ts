// Every failure clockhook explains carries the exit code it means (DESIGN.md: 1 a runtime failure, 2 bad
// usage); the CLI maps them in one place (cli/run.ts). Anything else that reaches it is a bug: exit 1, and
// a request to report it.

/** What the CLI exits with: 1 a runtime failure, 2 bad usage. */
export type ExitCode = 1 | 2;

/**
 * A failure clockhook explains: its message names what failed and what to do. Each class states its exit code
 * by the base it extends, UsageError (2) or CliError (1), as a getter on the prototype rather than a field of
 * the instance: an error compared by its own fields (a test's `toThrow(new TypeError(…))`) has only its message.
 */
export abstract class ClockhookError extends Error {
  abstract readonly exitCode: ExitCode;

  /** What the CLI prints after "clockhook: ", the message unless a class says more. */
  said(): string {
    return this.message;
  }
}

/** A mistake in how a command was called or configured: the message says what to type instead. Exit 2. */
export class UsageError extends ClockhookError {
  override readonly name: string = 'UsageError';
  get exitCode(): 2 {
    return 2;
  }
}

/**
 * A failure at run time that the message fully explains (port taken, file unreadable). Exit 1: the errors of
 * every component that are runtime failures extend it (a store locked, the disk full, an API error).
 */
export class CliError extends ClockhookError {
  override readonly name: string = 'CliError';
  get exitCode(): 1 {
    return 1;
  }
}

/**
 * A bad value of an option, from a library call or a flag: a TypeError with an exact message, as ws throws
 * one, that the CLI also knows as bad usage (a TypeError of a bug is not one).
 */
export class OptionError extends TypeError {
  get exitCode(): 2 {
    return 2;
  }
}

/**
 * A refused replay or inspector action (no capture by that id, nothing to forward to, no secret to
 * re-sign with…): `code` is stable for the page and scripts, `message` says what to do.
 */
export class ActionError extends CliError {
  override readonly name = 'ActionError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What to say of an error on a line of its own: an explained one's words, else its message; never its class. */
export function explained(error: unknown): string {
  if (error instanceof ClockhookError) return error.said();
  return error instanceof Error ? error.message : String(error);
}

/** The exit code an error states, or null for one that states none (a bug). */
export function exitCodeOf(error: unknown): ExitCode | null {
  const code = (error as { exitCode?: unknown } | null)?.exitCode;
  return error instanceof Error && (code === 1 || code === 2) ? code : null;
}
