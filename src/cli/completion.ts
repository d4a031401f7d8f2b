import type { Command } from 'commander';
import { EVENT_TYPES } from '../contract/index.js';
import { UsageError } from '../errors.js';
import { bashScript, type CompletionTable, fishScript, zshScript } from './completion-scripts.js';

export const SHELL_NAMES = ['bash', 'zsh', 'fish'] as const;

/** Positionals with a closed set of values, by command path. */
const POSITIONAL: Record<string, string[]> = {
  trigger: [...EVENT_TYPES],
  completion: [...SHELL_NAMES],
};

/** Positionals whose values are ids in this folder's .clockhook/: captures, event ids, endpoints. */
const IDS: Record<string, 'captures' | 'events' | 'endpoints'> = {
  'captures show': 'captures',
  'captures export': 'captures',
  replay: 'captures',
  'events get': 'events',
  'events redeliver': 'events',
  secret: 'endpoints',
  ...Object.fromEntries(
    ['get', 'ping', 'enable', 'disable', 'update', 'delete'].map((sub) => [`endpoints ${sub}`, 'endpoints' as const]),
  ),
};

/** The table of a program: every command path with its words. */
export function completionTable(program: Command): CompletionTable {
  const paths: CompletionTable['paths'] = [];
  const statusByPath: Record<string, string[]> = {};
  const visit = (command: Command, path: string) => {
    const flags = command.options.flatMap((option) => (option.long ? [option.long] : []));
    const subcommands = command.commands.map((sub) => sub.name());
    const extra = path === '' ? ['--version'] : [];
    const words = [...subcommands, ...flags, '--help', ...extra, ...(POSITIONAL[path] ?? [])];
    paths.push({ path, words, subcommands, ids: IDS[path] ?? null });
    const status = command.options.find((option) => option.long === '--status');
    if (status) statusByPath[path] = status.argChoices ?? ['2xx', 'failed', 'rejected'];
    for (const sub of command.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(program, '');
  return {
    paths,
    values: { '--format': ['har', 'curl', 'fixture', 'ndjson'] },
    statusByPath,
    files: ['--db', '--config', '--output', '--data', '--keys', '--tls-cert', '--tls-key'],
    types: ['*', ...EVENT_TYPES],
  };
}

const SCRIPTS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

/** `clockhook completion bash|zsh|fish`: prints a completion script for the shell. */
export function registerCompletion(program: Command): void {
  program
    .command('completion <shell>')
    .description(
      'print a completion script for bash, zsh or fish: for clockhook and npx clockhook, commands, flags and values',
    )
    .action((shell: string) => {
      if (!Object.hasOwn(SCRIPTS, shell)) throw new UsageError(`completion: give bash, zsh or fish (got ${shell}).`);
      process.stdout.write(SCRIPTS[shell as keyof typeof SCRIPTS](completionTable(program)));
    });
}
