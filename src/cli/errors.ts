/** A mistake in how the command was called: exit code 2, message says what to type instead. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A failure at run time that the message fully explains (port taken, file unreadable): exit code 1. */
export class CliError extends Error {
  override readonly name = 'CliError';
}
