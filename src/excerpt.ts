// The page's own excerpt (ui/excerpt.js, typed by ui/excerpt.d.ts), so that the terminal and the inspector
// say the same of an answer. A static import: a top-level await here would keep `require('clockhook/testing')`
// from loading the package (Node's require of ES modules refuses a graph with one).
import { textExcerpt as shared } from '../ui/excerpt.js';

/**
 * What the app said when it did not answer 2xx, for the delivery's line at the terminal, so that a
 * handler's "signature mismatch" is read there and not only in the inspector (see textExcerpt); null
 * for bytes or nothing.
 */
export function answerExcerpt<T extends { body: string; bodyEncoding: string }>(forward: T): string | null {
  return forward.bodyEncoding === 'utf8' ? textExcerpt(forward.body) : null;
}

/**
 * The gist of an answer's text for one line at a terminal: the message of a JSON error body, the title
 * of an HTML page (not "Error" alone: then its first `<pre>`), else the first line of text. Control
 * characters (a terminal's escape sequences among them) replaced, at most 100 characters; null for an
 * empty answer.
 */
export const textExcerpt: (body: string) => string | null = shared;
