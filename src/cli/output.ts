/** Output helpers for people (tables, colour on a TTY only) and for scripts (--json). */

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

/** A plain text table with a header row; every cell stringified, columns padded to the widest cell. */
export function formatTable(columns: string[], rows: unknown[][]): string {
  const cells = [columns, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '-' : String(cell))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

export { maskSecret } from '../contract/index.js';
