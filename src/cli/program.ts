import { readFileSync } from 'node:fs';
import { Command } from 'commander';

// Read rather than imported: JSON modules still print an ExperimentalWarning on Node 20.
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The commander program with every command registered; commands only map flags to library calls. */
export function buildProgram(): Command {
  const program = new Command('clockhook')
    .description('Local development tunnel and inspector for the time-tracking service\'s signed webhooks.')
    .version(pkg.version)
    .showHelpAfterError('(run with --help for usage)');
  return program;
}
