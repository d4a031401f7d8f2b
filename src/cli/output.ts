/** Output helpers for people (tables, colour on a TTY only) and for scripts (--json). */

import { stripVTControlCharacters } from 'node:util';

const useColour = (stream: NodeJS.WriteStream = process.stdout) =>
  Boolean(stream.isTTY) && !('NO_COLOR' in process.env) && process.env.TERM !== 'dumb';

function paint(code: number) {
  return (text: string) => (useColour() ? `\u001b[${code}m${text}\u001b[39m` : text);
}

export const colour = {
  green: paint(32),
  red: paint(31),
  yellow: paint(33),
  cyan: paint(36),
  grey: paint(90),
};

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

let pendingOutput = '';

/**
 * Writes a line to stdout, batching the lines of one turn of the event loop into one write: stdout
 * to a pipe is synchronous, and a burst of deliveries must not cost a system call each.
 */
export function writeLine(text: string): void {
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

/** The narrowest a column is cut to when a table is fitted to the terminal. */
const MIN_FITTED_WIDTH = 12;

/**
 * A plain text table with a header row; every cell stringified, columns padded to the widest cell.
 * Given `maxWidth` (the terminal's, `terminalWidth()`), a wider table is fitted the way `gh` does it:
 * the widest columns are cut, their cells end in "…". Piped output is never cut; `--json` has everything.
 */
export function formatTable(columns: string[], rows: unknown[][], maxWidth: number | undefined): string {
  const cells = [columns, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '-' : String(cell))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => visibleLength(row[i]))));
  let overflow = maxWidth ? widths.reduce((sum, width) => sum + width, 2 * (columns.length - 1)) - maxWidth : 0;
  while (overflow > 0) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest] <= MIN_FITTED_WIDTH) break;
    widths[widest] -= 1;
    overflow -= 1;
  }
  const fit = (cell: string, width: number) => {
    const length = visibleLength(cell);
    // A coloured cell is short (a status or a mark) and never cut: cutting could split its escape codes.
    if (length > width && length === cell.length) return `${cell.slice(0, width - 1)}…`;
    return cell + ' '.repeat(Math.max(0, width - length));
  };
  return cells.map((row) => row.map((cell, i) => fit(cell, widths[i])).join('  ').trimEnd()).join('\n');
}

export { maskSecret } from '../contract/index.js';
