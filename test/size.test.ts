import { describe, expect, it } from 'vitest';
import { formatMiB, formatSizeFlag, parseSize } from '../src/size.js';

describe('parseSize', () => {
  it.each([
    ['5mb', 5 * 1024 * 1024],
    ['512kb', 512 * 1024],
    ['1048576', 1048576],
    ['2MB', 2 * 1024 * 1024],
    ['64MiB', 64 * 1024 * 1024],
    ['64m', 64 * 1024 * 1024],
    ['1.5 GiB', 1.5 * 1024 ** 3],
    ['10 kib', 10 * 1024],
    ['100b', 100],
  ])('%s is %d bytes', (text, bytes) => expect(parseSize(text)).toBe(bytes));
  it.each(['lots', '', '-1', '1e9', '5mbb', 'mb', '5 ib', '5bi'])('refuses %j', (text) =>
    expect(() => parseSize(text)).toThrow(/512kb/),
  );
});

describe('formatMiB', () => {
  it.each([
    [64 * 1024 * 1024, '64 MiB'],
    [5.5 * 1024 * 1024, '5.5 MiB'],
    [1000, '0 MiB'],
  ])('%d is %s', (bytes, text) => expect(formatMiB(bytes)).toBe(text));
});

describe('formatSizeFlag', () => {
  it.each([
    [5 * 1024 * 1024, '5mb'],
    [5 * 1024 * 1024 + 1, '6mb'],
    [1000, '1mb'],
  ])('%d fits in %s, the smallest whole flag size that holds it', (bytes, text) => {
    expect(formatSizeFlag(bytes)).toBe(text);
    expect(parseSize(text)).toBeGreaterThanOrEqual(bytes);
  });
});
