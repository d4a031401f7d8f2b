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

/** One NDJSON line, for the long-running commands' --json mode. */
export function printLine(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** A plain text table with a header row; every cell stringified, columns padded to the widest cell. */
export function formatTable(columns: string[], rows: unknown[][]): string {
  const cells = [columns, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '-' : String(cell))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

export { maskSecret } from '../contract/index.js';
