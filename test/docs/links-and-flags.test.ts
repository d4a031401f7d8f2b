import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { installLine } from '../../src/optional.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');

/** Every command by its path (`endpoints list`), with the flags its `--help` lists. */
function commandFlags(): Map<string, Set<string>> {
  const flags = new Map<string, Set<string>>();
  const visit = (command: Command, path: string) => {
    const own = new Set(['--help', ...command.options.flatMap((o) => (o.long ? [o.long] : []))]);
    if (path) flags.set(path, own);
    for (const sub of command.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(buildProgram(), '');
  // A command with subcommands is named in prose for all of them: its flags are theirs together.
  for (const [path, own] of flags) {
    for (const [other, theirs] of flags) if (other.startsWith(`${path} `)) for (const f of theirs) own.add(f);
  }
  return flags;
}

/** The command a page's flag tables belong to. */
const PAGE_COMMANDS: Record<string, string> = {
  'docs/listen.md': 'listen',
  'docs/relay.md': 'relay',
  'docs/check.md': 'check',
  'docs/sandbox.md': 'sandbox',
};

describe('README.md and docs/', () => {
  it('link only to files that exist', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
        const file = resolve(ROOT, dirname(page), target.split('#')[0]);
        if (!existsSync(file)) broken.push(`${page} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("give the install line of an optional feature as clockhook says it (package.json's versions)", () => {
    const docs = ['tracing.md', 'relay.md'].map((name) => readFileSync(join(ROOT, 'docs', name), 'utf8')).join('\n');
    for (const feature of ['tracing', 'redis'] as const) expect(docs).toContain(installLine(feature));
  });

  it("name only flags that the command's --help lists", () => {
    const flags = commandFlags();
    const unknown: string[] = [];
    const check = (page: string, path: string, flag: string) => {
      if (!flags.get(path)?.has(flag)) unknown.push(`${page}: clockhook ${path} ${flag}`);
    };
    for (const page of PAGES) {
      for (const line of read(page).split('\n')) {
        // `clockhook <command> [subcommand] … --flag …` on one line (a shell block or a code span).
        for (const match of line.matchAll(/clockhook ([a-z]+)(?: ([a-z]+))?([^`|]*)/g)) {
          const [, command, sub, rest] = match;
          if (!flags.has(command)) continue;
          const path = sub && flags.has(`${command} ${sub}`) ? `${command} ${sub}` : command;
          for (const [flag] of rest.matchAll(/--[a-z][a-z-]*/g)) check(page, path, flag);
        }
        // A page's flag table: | `--flag` | …
        const command = PAGE_COMMANDS[page];
        const row = /^\| (`--[^|]*)\|/.exec(line);
        if (command && row) for (const [flag] of row[1].matchAll(/--[a-z][a-z-]*/g)) check(page, command, flag);
      }
    }
    expect(unknown).toEqual([]);
  });
});

describe("the user's words", () => {
  // Our own words, which a user of the tool does not have: they say "the service's webhook rules", or
  // name the rule; DESIGN.md is not in their copy; a byte budget or our benchmark machine mean nothing there.
  const OURS = [/\bthe contract\b/i, /\bcontract's\b/i, /DESIGN\.md/, /byte budget/i, /benchmark machine/i];

  it.each(PAGES.filter((page) => page !== 'docs/performance-notes.md'))('%s speaks them', (page) => {
    const text = read(page);
    for (const word of OURS) expect(text.match(word)?.[0], `${page}: ${word}`).toBeUndefined();
  });

  it("the performance page is the user's, under 16 KB; the lab notes are beside it", () => {
    expect(Buffer.byteLength(read('docs/performance.md'))).toBeLessThan(16 * 1024);
    expect(read('docs/performance.md')).toContain('[lab notes](performance-notes.md)');
  });

  it('the README ends with what a user needs; contributor material is in CONTRIBUTING.md', () => {
    const readme = read('README.md');
    expect(readme).not.toMatch(/Listener#handle|Where things live in `src\/`/);
    expect(readme).not.toContain('<host>');
    expect(readme).toContain('[CONTRIBUTING.md](CONTRIBUTING.md)');
    expect(read('CONTRIBUTING.md')).toContain('Where things live in `src/`');
  });
});
