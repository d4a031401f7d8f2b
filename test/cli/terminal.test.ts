import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, runCli } from '../helpers/cli.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';

/** util-linux's `script` gives a command a pseudo-terminal; it is in every Debian (bsdutils is essential). */
const SCRIPT = '/usr/bin/script';
const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
const LONGEST = 'the contract envelope with a newer api_version and new data fields is accepted';
/** What a line shows: without its colour codes, counted in characters (… is one). */
const shown = (line: string) => stripVTControlCharacters(line);
const visible = (line: string) => [...shown(line)].length;

const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** Runs the CLI on a terminal `columns` wide, colours allowed; resolves with its exit code and lines. */
function onTerminal(columns: number, args: string[], cwd: string): Promise<{ code: number; lines: string[] }> {
  const { NO_COLOR: _, ...env } = cleanEnv();
  const command = `stty cols ${columns}; exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  return new Promise((resolve) => {
    execFile(SCRIPT, ['-qec', command, '/dev/null'], { cwd, env, timeout: 30_000 }, (error, stdout) => {
      resolve({ code: error ? Number(error.code) : 0, lines: stdout.split(/\r?\n/) });
    });
  });
}

describe.runIf(existsSync(SCRIPT))('tables on a real terminal', () => {
  it("fits check's table and advice to a 60-column terminal, wrapping them between words and keeping the colours", async () => {
    const dir = await tempDir();
    const app = await startReceiver();
    stops.push(dir.remove, app.close);
    const args = ['check', '--forward-to', app.url, '--secret', 'whsec_terminal'];

    const { code, lines } = await onTerminal(60, args, dir.path);
    expect(code).toBe(1); // the receiver accepts forged signatures
    const header = lines.findIndex((line) => line.includes('CHECK'));
    const advice = lines.findIndex((line) => line.startsWith('How to fix'));
    const table = lines.slice(header, advice);
    expect(table.length).toBeGreaterThan(10);
    for (const line of lines) expect(visible(line), line).toBeLessThanOrEqual(60);
    expect(table.join('\n')).toContain('\x1b[31mFAIL\x1b[39m');
    expect(table.join('\n')).not.toContain('…');
    // Each row's name, read down its column, is whole: the longest one too.
    const got = shown(table[0]).indexOf('GOT');
    const names: string[] = [];
    for (const line of table.slice(1).map(shown)) {
      const name = line.slice(6, got).trim();
      if (/^(pass|warn|FAIL) /.test(line)) names.push(name);
      else if (name) names[names.length - 1] += ` ${name}`;
    }
    expect(names).toContain(LONGEST);
    // The answers line up although only the status is coloured.
    const answers = table
      .filter((line) => /\d+ in \d+ ms$/.test(line))
      .map((line) => shown(line).search(/\d+ in \d+ ms$/));
    expect(new Set(answers).size).toBe(1);
    // How to fix: each hint wrapped under its text, whole.
    const hints = lines
      .slice(
        advice + 1,
        lines.findIndex((line) => /passed, \d+ failed/.test(line)),
      )
      .map(shown)
      .filter(Boolean);
    expect(hints.length).toBeGreaterThan(3);
    expect(hints.filter((line) => line.startsWith('       ')).length).toBeGreaterThan(0);
    expect(hints.join(' ').replace(/ {2,}/g, ' ')).toContain(
      'wrong-secret: Verify X-Service-Signature with your endpoint secret and reject on mismatch: anyone can POST to your URL.',
    );

    // Through a pipe nothing is fitted: it was the terminal's width that wrapped it.
    const piped = await runCli(args, { cwd: dir.path });
    expect(piped.stdout).toContain(LONGEST);
    expect(Math.max(...piped.stdout.split('\n').map(visible))).toBeGreaterThan(60);
  });
});
