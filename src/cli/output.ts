/** Output helpers for people (tables, colour on a TTY only) and for scripts (--json). */

import { stripVTControlCharacters } from 'node:util';
import type { Tone } from '../shared/verdict.js';

/**
 * Colour on a terminal, unless NO_COLOR is set or the terminal is dumb; FORCE_COLOR (not 0) asks for it
 * anywhere, as it does for Node and most CLIs (a CI log that shows colours).
 */
const useColour = (stream: NodeJS.WriteStream = process.stdout) => {
  const forced = process.env.FORCE_COLOR;
  if (forced !== undefined && forced !== '0' && forced !== 'false') return true;
  return Boolean(stream.isTTY) && !('NO_COLOR' in process.env) && process.env.TERM !== 'dumb';
};

function paint(code: number) {
  return (text: string) => (useColour() ? `\u001b[${code}m${text}\u001b[39m` : text);
}

const colour = {
  green: paint(32),
  red: paint(31),
  yellow: paint(33),
  cyan: paint(36),
  grey: paint(90),
};

/**
 * How the terminal paints a tone of the story (src/shared/verdict.ts): the one place a colour is chosen for a
 * word of clockhook's; a command paints what the story judged, never picks green or red itself.
 */
export const PAINT: Record<Tone, (text: string) => string> = {
  ok: colour.green,
  bad: colour.red,
  warn: colour.yellow,
  info: colour.cyan,
  plain: colour.grey,
};

export function printJson(value: unknown): void {
  if (!outputClosed) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

let pendingOutput = '';
let outputClosed = false;
let serving: string | undefined;

/**
 * When what reads clockhook's output goes away (`clockhook listen --json | head -1`, a `jq` that exited),
 * a write to the pipe fails (EPIPE), and that stream error would end the process: a listener would stop
 * answering the service in the middle of a delivery. Output is dropped instead. A one-shot command ends
 * as it would have, saying nothing (as `git log | head -1` does); a long-running one says so once on
 * stderr and goes on serving.
 */
let dropping = false;

export function dropOutputWhenClosed(): void {
  if (dropping) return; // once a process (a test runs the CLI many times in one)
  dropping = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (outputClosed) return;
    outputClosed = true;
    pendingOutput = '';
    const why = error.code === 'EPIPE' ? 'EPIPE: what read it has exited' : (error.code ?? error.message); // EIO: its terminal closed
    if (serving)
      process.stderr.write(
        `clockhook: standard output is closed (${why}); ${serving} goes on without it. Stop it with Ctrl-C.\n`,
      );
  });
  process.stderr.on('error', () => {}); // nowhere left to say anything
}

/** Marks a long-running command (listen, sandbox, relay): its output closing is said, and is not its end. */
export function keepServingWithoutOutput(command: string): void {
  serving = command;
}

/**
 * Writes a line to stdout, batching the lines of one turn of the event loop into one write: stdout
 * to a pipe is synchronous, and a burst of deliveries must not cost a system call each.
 */
export function writeLine(text: string): void {
  if (outputClosed) return;
  if (pendingOutput === '') setImmediate(flushOutput);
  pendingOutput += `${text}\n`;
}

/** Writes what writeLine batched; called before an exit. */
export function flushOutput(): void {
  if (pendingOutput === '') return;
  const text = pendingOutput;
  pendingOutput = '';
  process.stdout.write(text);
}

/** One NDJSON line, for the long-running commands' --json mode. */
export function printLine(value: unknown): void {
  writeLine(JSON.stringify(value));
}

/** The characters a text takes on a terminal (colour codes take none). */
export const visibleLength = (text: string) => stripVTControlCharacters(text).length;

/** The terminal's width when stdout is one; undefined for a pipe or a file. */
export const terminalWidth = (): number | undefined => (process.stdout.isTTY ? process.stdout.columns : undefined);

/** The narrowest a column is made when a table is fitted to the terminal. */
const MIN_FITTED_WIDTH = 12;

/**
 * A plain text table with a header row; every cell stringified, columns padded to the widest cell.
 * Given `maxWidth` (the terminal's, `terminalWidth()`), a wider table is fitted: its widest columns are
 * narrowed, and a cell too long for its column is either cut, ending in "…", the way `gh` does it
 * (`overflow: 'cut'`, for ids and URLs, which read badly broken), or wrapped between words onto lines
 * of its own under it (`'wrap'`, for sentences, which must be read whole). Piped output is never
 * fitted; `--json` has everything.
 */
export function formatTable(
  columns: string[],
  rows: unknown[][],
  maxWidth: number | undefined,
  overflow: 'cut' | 'wrap' = 'cut',
): string {
  const cells = [
    columns,
    ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '-' : String(cell)))),
  ];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => visibleLength(row[i]))));
  let excess = maxWidth ? widths.reduce((sum, width) => sum + width, 2 * (columns.length - 1)) - maxWidth : 0;
  while (excess > 0) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest] <= MIN_FITTED_WIDTH) break;
    widths[widest] -= 1;
    excess -= 1;
  }
  const pad = (cell: string, width: number) => cell + ' '.repeat(Math.max(0, width - visibleLength(cell)));
  // A coloured cell is short (a status or a mark) and never cut or wrapped: that could split its escape codes.
  const tooLong = (cell: string, width: number) => cell.length > width && visibleLength(cell) === cell.length;
  const layOut = (row: string[]): string[][] => {
    if (overflow === 'cut')
      return [
        row.map((cell, i) => pad(tooLong(cell, widths[i]) ? `${cell.slice(0, widths[i] - 1)}…` : cell, widths[i])),
      ];
    const wrapped = row.map((cell, i) => (tooLong(cell, widths[i]) ? wrapText(cell, widths[i]) : [cell]));
    const height = Math.max(...wrapped.map((lines) => lines.length));
    return Array.from({ length: height }, (_, line) => wrapped.map((lines, i) => pad(lines[line] ?? '', widths[i])));
  };
  return cells
    .flatMap(layOut)
    .map((line) => line.join('  ').trimEnd())
    .join('\n');
}

/** `text` in lines of at most `width` characters, broken at spaces; a word longer than a line is split. */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (let word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length <= width) {
      line += ` ${word}`;
      continue;
    }
    if (line !== '') lines.push(line);
    for (; word.length > width; word = word.slice(width)) lines.push(word.slice(0, width));
    line = word;
  }
  lines.push(line);
  return lines;
}

export { maskSecret } from '../contract/index.js';
