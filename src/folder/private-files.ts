import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../errors.js';
import { STATE_DIR } from './files.js';

/**
 * What clockhook writes into its own `.clockhook/` folder as `.gitignore`: it holds signing secrets, API
 * keys and tokens, and captures of what the service sent, none of which belongs in a repository. Git then
 * ignores the folder without a line in the project's own `.gitignore` (as pytest's and mypy's caches do).
 */
const STATE_DIR_GITIGNORE = '# Written by clockhook: secrets, tokens and captures stay out of git.\n*\n';

/**
 * Creates the folder (and parents) as 0700. An existing folder is tightened to 0700 only when it is a
 * `.clockhook` folder, clockhook's own: one the user named with `--db` (the project folder, `/tmp`, `/etc`)
 * keeps its mode, which other programs and users may depend on; the files clockhook puts there are 0600.
 * A `.clockhook` folder also gets its `.gitignore` (STATE_DIR_GITIGNORE) whenever it has none, or one that does
 * not ignore everything (empty after a start on a full disk, say): the folder holds the endpoint's secret. One
 * that does (`*` on a line of its own) is left as it is, edits and all. It is written whole or not at all.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await makeFolders(dir);
  if (basename(dir) !== STATE_DIR) return;
  await chmod(dir, 0o700).catch(() => {});
  const path = join(dir, '.gitignore');
  const now = await readFile(path, 'utf8').catch(() => '');
  if (now.split(/\r?\n/).some((line) => line.trim() === '*')) return;
  // Best effort: a folder it cannot write to fails the write that follows, with a message about that file;
  // the next start tries again.
  await writeAtomically(path, STATE_DIR_GITIGNORE).catch(() => {});
}

/**
 * `mkdir -p`, a folder at a time, as 0700. Node's recursive mkdir never returns for a path under `/proc`
 * (it retries the ENOENT that file system gives for ever), and reports ENOENT for what is really EROFS or
 * EACCES; a plain mkdir says which. ENOENT with the parent there is the file system's own refusal.
 */
async function makeFolders(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    // Something already there: a folder will do; a file is mkdir's EEXIST, for the caller to explain.
    if (code === 'EEXIST' && (await stat(dir)).isDirectory()) return;
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir || (await stat(parent).catch(() => null))) throw error;
    await makeFolders(parent);
    await mkdir(dir, { mode: 0o700 }).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST') throw again;
    });
  }
}

/**
 * The path given for one of clockhook's files (`--db`) holds something that is not clockhook's: a folder,
 * or another program's file. It is left as it is, and the message says what to give instead.
 */
export class ForeignPathError extends UsageError {
  override readonly name = 'ForeignPathError';
}

/**
 * Refuses a path that is a folder, before anything is made beside it (a lock, a journal): `--db .` would
 * otherwise put them in the folder above, and fail on the first read.
 */
export async function assertNotFolder(path: string, example: string): Promise<void> {
  const stats = await stat(path).catch(() => null);
  if (stats?.isDirectory())
    throw new ForeignPathError(
      `${path} is a folder, not a file. Give --db a file path, such as ${join(path, example)}.`,
    );
}

/** Whether a file is in a `.clockhook` folder, where everything is clockhook's. */
export const inStateDir = (path: string) => basename(dirname(path)) === STATE_DIR;

/** Whether a file starts with these bytes. */
export async function startsWith(path: string, text: string): Promise<boolean> {
  const expected = Buffer.from(text);
  const handle = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(expected.length), 0, expected.length, 0);
    return bytesRead === expected.length && buffer.equals(expected);
  } finally {
    await handle.close();
  }
}

/**
 * Refuses to move aside an unreadable file that is not clockhook's: one outside a `.clockhook` folder
 * that neither is empty nor begins with `marker`, as clockhook writes it. `--db package.json` (or
 * `/etc/passwd`, as root) would otherwise be renamed to `….corrupt-<time>` and replaced, and whatever
 * reads it broken. A store of clockhook's own, damaged, still begins as one, and is moved aside.
 */
export async function assertOwnFile(path: string, marker: string, what: string): Promise<void> {
  if (inStateDir(path)) return;
  if ((await stat(path)).size === 0 || (await startsWith(path, marker))) return;
  throw new ForeignPathError(
    `${path} is not ${what}: it does not begin as clockhook writes one, so it is left as it is. Give --db a file clockhook made, or a path where no file is yet.`,
  );
}

/**
 * Writes a file atomically with mode 0600: a temp file beside it, fsync, rename. A reader never
 * sees half a file, and a crash leaves either the old or the new content. `data` may come in
 * pieces, made one at a time as they are written, so that a large file is never whole in memory.
 */
export async function writePrivateFile(path: string, data: string | Buffer | Iterable<string>): Promise<void> {
  await ensurePrivateDir(dirname(path));
  await writeAtomically(path, data);
}

/** Writes a file (0600) whole or not at all: to a temp file beside it, fsynced, renamed over it. */
async function writeAtomically(path: string, data: string | Buffer | Iterable<string>): Promise<void> {
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    try {
      if (typeof data === 'string' || Buffer.isBuffer(data)) await handle.writeFile(data);
      // Each writeFile on a handle goes on from where the last one ended.
      else for (const piece of data) await handle.writeFile(piece);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    // A full disk must not also leave half-written temp files behind.
    await unlink(temp).catch(() => {});
    // A file handle's errors name no path: this one says which file could not be written.
    (error as NodeJS.ErrnoException).path ??= path;
    throw error;
  }
}

/** Moves an unreadable file aside to `<path>.corrupt-<time>` (never overwritten); returns the new path. */
export async function moveAside(path: string, now = Date.now()): Promise<string> {
  const aside = `${path}.corrupt-${new Date(now).toISOString().replace(/[:.]/g, '-')}`;
  await rename(path, aside);
  return aside;
}

export type ReadJsonResult<T> =
  { status: 'missing' } | { status: 'ok'; data: T } | { status: 'corrupt'; movedTo: string; reason: string };

/**
 * Reads a JSON file; a corrupt one is moved aside and reported, never overwritten. With `owner`, a file
 * that is not clockhook's (see assertOwnFile) is refused instead of being moved.
 */
export async function readJsonFile<T>(
  path: string,
  isValid: (value: unknown) => value is T,
  owner?: { marker: string; what: string },
): Promise<ReadJsonResult<T>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    throw error;
  }
  let reason: string;
  try {
    const value: unknown = JSON.parse(text);
    if (isValid(value)) return { status: 'ok', data: value };
    reason = 'it does not have the expected shape';
  } catch (error) {
    reason = `it is not valid JSON (${(error as Error).message})`;
  }
  if (owner) await assertOwnFile(path, owner.marker, owner.what);
  return { status: 'corrupt', movedTo: await moveAside(path), reason };
}
