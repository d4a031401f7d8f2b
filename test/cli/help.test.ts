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
  it.each([{ path: '(top level)', command: buildProgram() }, ...commands()])(
    '$path ends with examples, says which options are required, and gives each default once',
    ({ command }) => {
      const help = helpOf(command);
      const examples = help.slice(help.indexOf('Examples:'));
      expect(help).toContain('Examples:');
      expect(examples.match(/\$ npx clockhook |\$ .*npx clockhook /g)?.length ?? 0).toBeGreaterThanOrEqual(1);
      for (const option of command.options) {
        if (option.mandatory) expect(option.description, option.flags).toMatch(/^required: /);
        const defaults =
          (option.description.match(/\(default/g)?.length ?? 0) + (option.defaultValue === undefined ? 0 : 1);
        expect(defaults, `${option.flags}: ${option.description}`).toBeLessThanOrEqual(1);
      }
    },
  );

  it('-v and --version print the version', async () => {
    const dir = await tempDir();
    try {
      for (const flag of ['-v', '--version', '-V'])
        expect((await runCli([flag], { cwd: dir.path })).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    } finally {
      await dir.remove();
    }
  });

  it('of trigger lists the 38 event types of the contract', () => {
    const help = helpOf(commands().find((c) => c.path === 'trigger')!.command);
    expect(EVENT_TYPES).toHaveLength(38);
    for (const type of EVENT_TYPES) expect(help).toContain(type);
    expect(help).toContain('Event types (38):');
  });
});

// Every closed set is refused before anything is asked of the API, the same way on every surface: an event
// type with the one it most likely meant, the types of the resource it names, or where they are listed
// (unknownTypeWords); never an HTTP line.
describe('a far-off value of a closed set', () => {
  const family = /\(the punch types are punch\.created, punch\.updated, punch\.deleted\)/;
  const lists = 'npx clockhook trigger --help lists them';
  it.each([
    [['captures', 'list', '--status', 'zzz'], /give 2xx, failed, rejected/],
    [['captures', 'export', '--format', 'zzz'], /Allowed choices are har, curl, fixture, ndjson/],
    [['endpoints', 'update', '3', '--status', 'zzz'], /Allowed choices are enabled, disabled/],
    [['completion', 'zzz'], /give bash, zsh or fish/],
    [['relay', 'keys', 'zzz'], /unknown command 'zzz'[\s\S]*add \[options\] <name>[\s\S]*list[\s\S]*revoke/],
    [['events', 'zzz'], /unknown command 'zzz'[\s\S]*list[\s\S]*get[\s\S]*redeliver/],
    [['captures', 'list', '--type', 'zzz.zzz'], lists],
    [['trigger', 'zzz.zzz'], /none of the 38 types is close: npx clockhook trigger --help lists them/],
    [['listen', '--events', 'zzz.zzz'], /Valid types: \*, employee\.created, /],
    [['events', 'list', '--type', 'zzqqxx'], lists],
    [['captures', 'list', '--type', 'punch.nope'], family],
    [['trigger', 'punch.nope'], family],
    [['endpoints', 'create', '--url', 'https://example.com/h', '--events', 'punch.nope'], family],
  ] as [string[], RegExp | string][])('%j is refused naming the valid values, exit 2', async (args, valid) => {
    const dir = await tempDir();
    try {
      const res = await runCli(args, { cwd: dir.path });
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(valid);
      expect(res.stderr).not.toMatch(/\[(GET|POST)\]|HTTP|http:\/\//);
    } finally {
      await dir.remove();
    }
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
    expect(fish).toContain("complete -c clockhook -f -a '(__clockhook_candidates)'");
    expect(fish).toContain("complete -c npx -n 'contains -- clockhook (commandline -opc)'");
    const bad = await runCli(['completion', 'tcsh'], { cwd: dir.path });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('give bash, zsh or fish');
  });
});
