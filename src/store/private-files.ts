import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** The folder clockhook keeps its state in, in the project folder it runs from. */
const STATE_DIR_NAME = '.clockhook';

/**
 * What clockhook writes into its own `.clockhook/` folder as `.gitignore`: it holds signing secrets, API
 * keys and tokens, and captures of what the service sent, none of which belongs in a repository. Git then
 * ignores the folder without a line in the project's own `.gitignore` (as pytest's and mypy's caches do).
 */
const STATE_DIR_GITIGNORE = '# Written by clockhook: secrets, tokens and captures stay out of git.\n*\n';

/**
 * Creates the folder (and parents) as 0700; tightens an existing one. A folder named `.clockhook` also
 * gets its `.gitignore` (STATE_DIR_GITIGNORE) when it has none: never overwritten, so an edit of it
 * stays, and made again if deleted. A folder of another name, which a user chose with `--db`, gets none.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    // A recursive mkdir reports ENOENT for what is really EROFS or EACCES; the plain one says which.
    await mkdir(dir, { mode: 0o700 }).catch((plain: NodeJS.ErrnoException) => {
      throw plain.code === 'EEXIST' ? error : plain;
    });
  }
  await chmod(dir, 0o700).catch(() => {});
  // Best effort: a folder it cannot write to fails the write that follows, with a message about that file.
  if (basename(dir) === STATE_DIR_NAME) await writeFile(join(dir, '.gitignore'), STATE_DIR_GITIGNORE, { flag: 'wx', mode: 0o600 }).catch(() => {});
}

/**
 * Writes a file atomically with mode 0600: a temp file beside it, fsync, rename. A reader never
 * sees half a file, and a crash leaves either the old or the new content. `data` may come in
 * pieces, made one at a time as they are written, so that a large file is never whole in memory.
 */
export async function writePrivateFile(path: string, data: string | Buffer | Iterable<string>): Promise<void> {
  await ensurePrivateDir(dirname(path));
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
  | { status: 'missing' }
  | { status: 'ok'; data: T }
  | { status: 'corrupt'; movedTo: string; reason: string };

/** Reads a JSON file; a corrupt one is moved aside and reported, never overwritten. */
export async function readJsonFile<T>(path: string, isValid: (value: unknown) => value is T): Promise<ReadJsonResult<T>> {
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
  return { status: 'corrupt', movedTo: await moveAside(path), reason };
}
