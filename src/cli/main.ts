import { CommanderError } from 'commander';
import { ApiError } from '../api/index.js';
import { isDiskFull } from '../store/index.js';
import { CliError, UsageError } from './errors.js';
import { dropOutputWhenClosed } from './output.js';
import { buildProgram } from './program.js';

/** Runs the CLI; maps failures to the exit codes of DESIGN.md: 1 runtime failure, 2 bad usage. */
export async function run(argv: string[] = process.argv): Promise<void> {
  dropOutputWhenClosed();
  const program = buildProgram();
  try {
    // -V, commander's short flag for the version before -v was (docs and scripts may use it).
    await program.parseAsync(argv.length === 3 && argv[2] === '-V' ? [...argv.slice(0, 2), '--version'] : argv);
  } catch (error) {
    process.exitCode = reportError(error);
  }
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // commander has printed its own message already; help and version are successes.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`clockhook: ${error.message}\n`);
    return 2;
  }
  if (error instanceof ApiError) {
    process.stderr.write(`clockhook: the API call failed\n${error.describe()}\n`);
    return 1;
  }
  if (error instanceof CliError) {
    process.stderr.write(`clockhook: ${error.message}\n`);
    return 1;
  }
  if (isDiskFull(error)) {
    // Said, not thrown: the path and what to do, no stack trace (a DiskFullError's message says both).
    const { name, message, path } = error as NodeJS.ErrnoException;
    const said =
      name === 'DiskFullError'
        ? message
        : `the disk is full: could not write ${path ?? 'a file'} (${message}). Free some space and run it again.`;
    process.stderr.write(`clockhook: ${said}\n`);
    return 1;
  }
  process.stderr.write(
    `clockhook: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return 1;
}

await run();
