import { readdir, readFile } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

export interface StaticFile {
  type: string;
  body: Buffer;
}

/**
 * The modules the page shares with the terminal and the MCP tools (src/shared/), as built: served under
 * /shared/, so that the rule is written once, in src/, and the page has no copy of it. From dist/inspector/
 * (and from src/inspector/ in a test run, which builds first) the build is ../../dist/shared/.
 */
const SHARED_DIR = fileURLToPath(new URL('../../dist/shared/', import.meta.url));

/**
 * Loads every file of `ui/` into memory once, keyed by URL path, with the shared modules under /shared/
 * (`shared`: their folder). Requests are answered only for these exact keys, so no request path (`/../`,
 * `%2e%2e`, absolute, …) can reach another file.
 */
export async function loadStaticFiles(root: string, shared = SHARED_DIR): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (TYPES[extname(entry.name)]) {
        const key = `/${relative(root, full).split(sep).join('/')}`;
        files.set(key, { type: TYPES[extname(entry.name)], body: await readFile(full) });
      }
    }
  }
  await walk(root);
  for (const name of await readdir(shared)) {
    if (name.endsWith('.js'))
      files.set(`/shared/${name}`, { type: TYPES['.js'], body: await readFile(join(shared, name)) });
  }
  const index = files.get('/index.html');
  if (index) files.set('/', index);
  return files;
}
