import { Command } from 'commander';
import { registerCaptures } from './captures.js';
import { registerCheck } from './check.js';
import { registerReplay } from './replay.js';
import { packageVersion } from './version.js';
import { registerCompletion } from './completion.js';
import { registerInit } from './config.js';
import { addExamples } from './help.js';
import { UsageError } from '../errors.js';
import { registerEndpoints } from './endpoints.js';
import { registerEvents } from './events.js';
import { registerListen } from './listen.js';
import { registerMcp } from './mcp.js';
import { registerRelay } from './relay.js';
import { registerSandbox } from './sandbox.js';
import { registerSecret } from './secret.js';
import { registerTrigger } from './trigger.js';
import { registerTypes } from './types.js';

/** The commander program with every command registered; commands only map flags to library calls. */
export function buildProgram(): Command {
  const program = new Command('clockhook')
    .description("Local development tunnel and inspector for the time-tracking service's signed webhooks.")
    // -v as most CLIs have it; -V, commander's own, still works (see main.ts).
    .version(packageVersion, '-v, --version')
    .showHelpAfterError('(run with --help for usage)')
    // commander's own usage errors ("error: missing required argument") begin as clockhook's others do.
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'clockhook: ')) })
    .exitOverride();
  registerListen(program);
  registerSandbox(program);
  registerRelay(program);
  registerCheck(program);
  registerSecret(program);
  registerTrigger(program);
  registerEndpoints(program);
  registerEvents(program);
  registerCaptures(program);
  registerReplay(program);
  registerTypes(program);
  registerMcp(program);
  registerCompletion(program);
  registerInit(program);
  addExamples(program);
  // A command of subcommands answers an unknown one with its help, which lists them.
  const withSubcommands = (command: Command): Command[] => [
    ...(command.commands.length > 0 && command !== program ? [command] : []),
    ...command.commands.flatMap(withSubcommands),
  ];
  for (const command of withSubcommands(program)) command.showHelpAfterError(true);
  program.hook('preAction', (_program, command) => refuseEmptyValues(command));
  return program;
}

/**
 * A flag given an empty value, most often a shell variable that is not set (`--api-key "$KEY"`), is a
 * mistake: taken as absent, it would quietly fall back to a default (the sandbox instead of the service).
 */
function refuseEmptyValues(command: Command): void {
  for (const option of command.options) {
    const name = option.attributeName();
    if (name === 'description') continue; // `endpoints update --description ""` clears it
    const value: unknown = command.getOptionValue(name);
    if (command.getOptionValueSource(name) === 'cli' && typeof value === 'string' && value.trim() === '') {
      throw new UsageError(
        `${option.long} was given an empty value (an unset shell variable?): give it a value, or leave the flag out.`,
      );
    }
  }
}
