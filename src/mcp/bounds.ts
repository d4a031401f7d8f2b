// What a result may hold: a body is shown a part at a time (the client reads at most 10 MB a message, and a
// body of control bytes is six times longer as JSON), and a value echoed in an error is cut short.
import { isUtf8 } from 'node:buffer';
import { z } from './sdk.js';

/** The body bytes a result shows unless the caller asks for another amount. */
export const DEFAULT_BODY_BYTES = 16 * 1024;
/** At most: a part of control bytes is six times longer as JSON, and the text repeats it: under the client's 10 MB. */
export const MAX_SHOWN_BODY_BYTES = 512 * 1024;

/** The inputs that page through a body. */
export const bodyInputs = {
  maxBodyBytes: z
    .number()
    .int()
    .min(256)
    .max(MAX_SHOWN_BODY_BYTES)
    .default(DEFAULT_BODY_BYTES)
    .describe(`bytes of the body (and of the app's answer) to show, ${DEFAULT_BODY_BYTES} by default`),
  bodyOffset: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe('where to begin showing the body, in bytes: nextBodyOffset of an earlier result'),
};

/** The longest id or value an input takes (ids are ~30 characters); longer ones are refused, never echoed. */
export const ID_CHARS = 200;

/** A value said in an error: cut to 60 characters. */
export function short(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}…` : value);
}

/** Where UTF-8 text cut at `end` ends on a whole character (moved back over a character's trailing bytes). */
function characterEnd(bytes: Buffer, end: number): number {
  if (end >= bytes.length) return bytes.length;
  let at = end;
  while (at > end - 4 && at > 0 && (bytes[at]! & 0xc0) === 0x80) at -= 1;
  return at;
}

/** A part of a body: from `offset`, at most `max` bytes, on whole characters when the body is text. */
export function bodyPartOf(bytes: Buffer, { offset, max }: { offset: number; max: number }) {
  const text = isUtf8(bytes);
  let from = Math.min(offset, bytes.length);
  // An offset inside a character begins at the next whole one.
  while (text && from < bytes.length && (bytes[from]! & 0xc0) === 0x80) from += 1;
  const end = text ? characterEnd(bytes, from + max) : Math.min(from + max, bytes.length);
  const part = bytes.subarray(from, end);
  return {
    body: part.toString(text ? 'utf8' : 'base64'),
    bodyEncoding: text ? ('utf8' as const) : ('base64' as const),
    bodySize: bytes.length,
    bodyOffset: from,
    truncated: from > 0 || end < bytes.length,
    nextBodyOffset: end < bytes.length ? end : null,
  };
}

/** The app's answer, cut to `max` bytes too (it is stored with its first 16 KiB at most). */
export function cutAnswer<T extends { body: string; bodyEncoding: 'utf8' | 'base64'; bodyTruncated?: boolean }>(
  forward: T,
  max: number,
): T {
  const bytes = Buffer.from(forward.body, forward.bodyEncoding);
  if (bytes.length <= max) return forward;
  const end = forward.bodyEncoding === 'utf8' ? characterEnd(bytes, max) : max;
  return { ...forward, body: bytes.subarray(0, end).toString(forward.bodyEncoding), bodyTruncated: true };
}
