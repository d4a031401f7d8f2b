// Types of ui/excerpt.js for the CLI's TypeScript (src/http/excerpt.ts imports it); the page loads the .js itself.

/** The gist of an app's answer for one line: an error body's message, an HTML page's title, else its first line. */
export function textExcerpt(body: string): string | null;
