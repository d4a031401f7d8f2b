import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { EVENT_TYPES } from '../../src/contract/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/sandbox.js';

/** Every command and subcommand, with its path. */
function commands(): { path: string; command: Command }[] {
  const all: { path: string; command: Command }[] = [];
  const visit = (command: Command, path: string) => {
    if (path) all.push({ path, command });
    for (const sub of command.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(buildProgram(), '');
  return all;
}

/** The whole --help of a command, the text added after it included. */
function helpOf(command: Command): string {
  let text = '';
  command.configureOutput({ writeOut: (s) => (text += s) });
  command.outputHelp();
  return text;
}

describe('--help', () => {
  it.each(commands().filter(({ command }) => command.commands.length > 0 || !command.parent?.parent))(
    '$path ends with examples',
    ({ command }) => {
      const help = helpOf(command);
      const examples = help.slice(help.indexOf('Examples:'));
      expect(help).toContain('Examples:');
      expect(examples.match(/\$ npx clockhook |\$ .*npx clockhook /g)?.length ?? 0).toBeGreaterThanOrEqual(2);
    },
  );

  it('of trigger lists the 38 event types of the contract', () => {
    const help = helpOf(commands().find((c) => c.path === 'trigger')!.command);
    expect(EVENT_TYPES).toHaveLength(38);
    for (const type of EVENT_TYPES) expect(help).toContain(type);
    expect(help).toContain('Event types (38):');
  });
});

describe('a mistyped event type', () => {
  it.each([
    [['trigger', 'punch.creatd']],
    [['events', 'list', '--type', 'punch.creatd']],
    [['endpoints', 'create', '--url', 'https://example.com/h', '--events', 'punch.creatd']],
    [['endpoints', 'update', '3', '--events', 'punch.created,punch.creatd']],
  ])('%j is answered with a suggestion, exit 2', async (args) => {
    const dir = await tempDir();
    try {
      const res = await runCli(args, { cwd: dir.path });
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/^clockhook: .*punch\.creatd"? \(did you mean punch\.created\?\)/);
    } finally {
      await dir.remove();
    }
  });
});

describe('clockhook completion', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir();
  });
  afterAll(() => dir.remove());

  /** What bash completes for the words typed so far, with the script sourced in a plain `bash --norc`. */
  async function complete(words: string[]): Promise<string[]> {
    const script = join(dir.path, 'clockhook.bash');
    const { stdout } = await runCli(['completion', 'bash'], { cwd: dir.path });
    await writeFile(script, stdout);
    const line = `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _clockhook; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const result = await promisify(execFile)('bash', ['--norc', '--noprofile', '-c', line]);
    return result.stdout.split('\n').filter(Boolean);
  }

  it('bash, sourced in a plain bash, completes clockhook tr to clockhook trigger', async () => {
    expect(await complete(['clockhook', 'tr'])).toEqual(['trigger']);
  });

  it('bash completes subcommands, flags and event types', async () => {
    expect(await complete(['clockhook', 'endpoints', 'en'])).toEqual(['enable']);
    expect(await complete(['clockhook', 'listen', '--forward'])).toEqual(['--forward-to']);
    expect(await complete(['clockhook', 'trigger', 'time_card.'])).toEqual([
      'time_card.approved',
      'time_card.rejected',
    ]);
    expect(await complete(['clockhook', 'events', 'list', '--type', 'pay_'])).toEqual([
      'pay_period.approved',
      'pay_period.reopened',
    ]);
  });

  it('zsh and fish print scripts; another shell is refused with exit 2', async () => {
    expect((await runCli(['completion', 'zsh'], { cwd: dir.path })).stdout).toContain('bashcompinit');
    const fish = (await runCli(['completion', 'fish'], { cwd: dir.path })).stdout;
    expect(fish).toContain('complete -c clockhook -n __fish_use_subcommand -a listen');
    const bad = await runCli(['completion', 'tcsh'], { cwd: dir.path });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('give bash, zsh or fish');
  });
});
