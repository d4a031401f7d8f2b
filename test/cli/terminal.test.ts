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
  it("fits check's table to a 60-column terminal, cutting cells with … and keeping the colours", async () => {
    const dir = await tempDir();
    const app = await startReceiver();
    stops.push(dir.remove, app.close);
    const args = ['check', '--forward-to', app.url, '--secret', 'whsec_terminal'];

    const { code, lines } = await onTerminal(60, args, dir.path);
    expect(code).toBe(1); // the receiver accepts forged signatures
    const table = lines.slice(lines.findIndex((line) => line.includes('CHECK')), lines.findIndex((line) => line.startsWith('How to fix')));
    expect(table.length).toBeGreaterThan(10);
    for (const line of table) expect(visible(line), line).toBeLessThanOrEqual(60);
    // The longest name is cut, ending in …; a cut never splits an escape code.
    expect(table.join('\n')).not.toContain(LONGEST);
    expect(table.some((line) => /the contract envelope[^…]*…/.test(line))).toBe(true);
    expect(table.join('\n')).toContain('\x1b[31mFAIL\x1b[39m');
    // The status and the answer columns line up although only the status is coloured.
    const got = table.filter((line) => /\d+ in \d+ ms$/.test(line)).map((line) => shown(line).search(/\d+ in \d+ ms$/));
    expect(new Set(got).size).toBe(1);

    // Through a pipe nothing is cut: it was the terminal's width that cut it.
    const piped = await runCli(args, { cwd: dir.path });
    expect(piped.stdout).toContain(LONGEST);
    expect(Math.max(...piped.stdout.split('\n').map(visible))).toBeGreaterThan(60);
  });
});
