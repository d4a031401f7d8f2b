// The gist of an app's answer, for one line: listen's line at the terminal and the page's note above a failed
// delivery say the same. Pure, with no import: the inspector serves its build to the page as /shared/excerpt.js.

/** Longest excerpt of an app's answer. */
const EXCERPT_CHARS = 100;

/** The first string among an error body's usual fields: `error`, `error.message`, `message`, `detail`, `title`. */
function errorMessageOf(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const body = value as Record<string, unknown>;
  const error = body.error as { message?: unknown } | null | undefined;
  const nested = typeof error === 'object' && error !== null ? error.message : undefined;
  for (const candidate of [body.error, nested, body.message, body.detail, body.title])
    if (typeof candidate === 'string' && candidate.trim()) return candidate;
  return null;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/**
 * An HTML error page's gist: its title, unless that says only "Error" (Express's), then its first
 * `<pre>` (Express's stack trace), else its text.
 */
function htmlHeadline(html: string): string {
  const text = (fragment: string) =>
    fragment
      .replace(/<[^>]*>/g, '\n')
      .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => ENTITIES[name] as string);
  const title = text(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? '').trim();
  if (title && !/^error$/i.test(title)) return title;
  const pre = /<pre[^>]*>([\s\S]*?)<\/pre>/i.exec(html)?.[1];
  return text(pre ?? html.replace(/<(head|script|style)[^>]*>[\s\S]*?<\/\1>/gi, ''));
}

/**
 * The gist of an answer's text for one line: the message of a JSON error body, the title of an HTML
 * page, else the first line of text. Control characters (a terminal's escape sequences among them)
 * replaced, at most 100 characters; null for an empty answer.
 */
export function textExcerpt(body: string): string | null {
  const text = body.trim();
  if (text === '') return null;
  let excerpt: string | null = null;
  if (text.startsWith('{')) {
    try {
      excerpt = errorMessageOf(JSON.parse(text));
    } catch {
      // cut at 16 KiB, or not JSON after all: read as text
    }
  }
  if (excerpt === null && text.startsWith('<')) excerpt = htmlHeadline(text.slice(0, 8192));
  const line = (excerpt ?? text)
    .split('\n')
    .map((l) => l.trim())
    .find(Boolean);
  if (!line) return null;
  const clean = line
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim(); // Cc: C0 and C1 controls, ESC among them
  return clean.length > EXCERPT_CHARS ? `${clean.slice(0, EXCERPT_CHARS - 1)}…` : clean;
}

/**
 * What the app said when it did not answer 2xx, for the delivery's line at the terminal, so that a
 * handler's "signature mismatch" is read there and not only in the inspector (see textExcerpt); null
 * for bytes or nothing.
 */
export function answerExcerpt<T extends { body: string; bodyEncoding: string }>(forward: T): string | null {
  return forward.bodyEncoding === 'utf8' ? textExcerpt(forward.body) : null;
}
