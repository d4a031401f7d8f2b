import type { Command } from 'commander';
import { EVENT_TYPES } from '../contract/index.js';
import { UsageError } from './errors.js';

/** A command as completion sees it: its flags and its subcommands. */
interface Node {
  name: string;
  flags: string[];
  commands: Node[];
}

function nodeOf(command: Command): Node {
  const flags = command.options.flatMap((option) => (option.long ? [option.long] : []));
  return { name: command.name(), flags: [...flags, '--help'], commands: command.commands.map(nodeOf) };
}

/** Flags whose value is an event type (or a comma list of them). */
const TYPE_FLAGS = ['--events', '--type'];

/**
 * Bash: plain `complete -F` and `compgen`, so it works in a bash without the bash-completion package.
 * Completes commands, subcommands, flags, and event types after `trigger`, `--events` and `--type`.
 */
function bashScript(root: Node): string {
  const types = EVENT_TYPES.join(' ');
  const cases = root.commands
    .map((command) => {
      if (command.commands.length === 0) {
        const extra = command.name === 'trigger' ? ' ${types}' : '';
        return `    ${command.name}) words="${command.flags.join(' ')}${extra}" ;;`;
      }
      const subs = command.commands.map((sub) => `        ${sub.name}) words="${sub.flags.join(' ')}" ;;`).join('\n');
      return `    ${command.name})
      if [ "$COMP_CWORD" -eq 2 ]; then words="${command.commands.map((c) => c.name).join(' ')} --help"
      else case "\${COMP_WORDS[2]}" in
${subs}
      esac; fi ;;`;
    })
    .join('\n');
  return `# clockhook completion for bash: source <(clockhook completion bash)
_clockhook() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" words=""
  local types="${types}"
  case "$prev" in ${TYPE_FLAGS.join('|')}) COMPREPLY=($(compgen -W "$types" -- "$cur")); return ;; esac
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${root.commands.map((c) => c.name).join(' ')} --help --version" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _clockhook clockhook
`;
}

/** zsh runs the bash completion through its bashcompinit, as many CLIs' zsh completions do. */
function zshScript(root: Node): string {
  return `# clockhook completion for zsh: source <(clockhook completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashScript(root).split('\n').slice(1).join('\n')}`;
}

function fishScript(root: Node): string {
  const lines = [
    '# clockhook completion for fish: clockhook completion fish > ~/.config/fish/completions/clockhook.fish',
  ];
  lines.push(`complete -c clockhook -f`);
  for (const command of root.commands) {
    lines.push(`complete -c clockhook -n __fish_use_subcommand -a ${command.name}`);
    const seen = `__fish_seen_subcommand_from ${command.name}`;
    for (const sub of command.commands) lines.push(`complete -c clockhook -n '${seen}' -a ${sub.name}`);
    const flags = new Set([...command.flags, ...command.commands.flatMap((sub) => sub.flags)]);
    for (const flag of flags) lines.push(`complete -c clockhook -n '${seen}' -l ${flag.slice(2)}`);
    if (command.name === 'trigger') lines.push(`complete -c clockhook -n '${seen}' -a '${EVENT_TYPES.join(' ')}'`);
  }
  for (const flag of TYPE_FLAGS)
    lines.push(`complete -c clockhook -l ${flag.slice(2)} -x -a '${EVENT_TYPES.join(' ')}'`);
  return `${lines.join('\n')}\n`;
}

const SHELLS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

/** `clockhook completion bash|zsh|fish`: prints a completion script for the shell. */
export function registerCompletion(program: Command): void {
  program
    .command('completion <shell>')
    .description('print a completion script for bash, zsh or fish (commands, flags, event types)')
    .action((shell: string) => {
      if (!Object.hasOwn(SHELLS, shell)) throw new UsageError(`completion: give bash, zsh or fish (got ${shell}).`);
      process.stdout.write(SHELLS[shell as keyof typeof SHELLS](nodeOf(program)));
    });
}
