import { type Command, CommanderError } from 'commander';
import { exitCodeOf, type ExitCode } from '../errors.js';
import { isDiskFull } from '../store/disk-full.js';
import { dropOutputWhenClosed } from './output.js';

/**
 * Runs the CLI (`build` makes the program: buildProgram, or a test's) and sets the exit code of DESIGN.md
 * from what it threw: 1 a runtime failure, 2 bad usage; every error clockhook explains states its own.
 */
export async function run(argv: string[], build: () => Command): Promise<void> {
  dropOutputWhenClosed();
  const program = build();
  try {
    // -V, commander's short flag for the version before -v was (docs and scripts may use it).
    await program.parseAsync(argv.length === 3 && argv[2] === '-V' ? [...argv.slice(0, 2), '--version'] : argv);
  } catch (error) {
    process.exitCode = reportError(error, (text) => process.stderr.write(text));
  }
}

/** Says what failed on stderr (`write`), once, and returns the exit code it means. */
export function reportError(error: unknown, write: (text: string) => void): ExitCode | 0 {
  // commander has printed its own message already; help and version are successes.
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
  const code = exitCodeOf(error);
  if (code !== null) {
    const said = 'said' in (error as object) ? (error as { said(): string }).said() : (error as Error).message;
    write(`clockhook: ${said}\n`);
    return code;
  }
  if (isDiskFull(error)) {
    // Said, not thrown: the path and what to do, no stack trace.
    const { message, path } = error as NodeJS.ErrnoException;
    write(
      `clockhook: the disk is full: could not write ${path ?? 'a file'} (${message}). Free some space and run it again.\n`,
    );
    return 1;
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  write(`clockhook: unexpected failure, a bug in clockhook: please report it with what follows.\n${detail}\n`);
  return 1;
}
