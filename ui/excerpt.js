// The gist of an app's answer, for one line: the listener's delivery line at the terminal and the page's
// note above a failed delivery say the same (src/excerpt.ts imports this file, typed by excerpt.d.ts).

/** Longest excerpt of an app's answer. */
const EXCERPT_CHARS = 100;

/** The first string among an error body's usual fields: `error`, `error.message`, `message`, `detail`, `title`. */
function errorMessageOf(value) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const nested = typeof value.error === 'object' && value.error !== null ? value.error.message : undefined;
  for (const candidate of [value.error, nested, value.message, value.detail, value.title])
    if (typeof candidate === 'string' && candidate.trim()) return candidate;
  return null;
}

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/**
 * An HTML error page's gist: its title, unless that says only "Error" (Express's), then its first
 * `<pre>` (Express's stack trace), else its text.
 */
function htmlHeadline(html) {
  const text = (fragment) =>
    fragment.replace(/<[^>]*>/g, '\n').replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name) => ENTITIES[name]);
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
export function textExcerpt(body) {
  const text = body.trim();
  if (text === '') return null;
  let excerpt = null;
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
