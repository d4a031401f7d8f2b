// One rule for every file a command writes where the user said (`-o` of captures export and types, the folder of
// a fixture export, init's config file): nothing is made above what was named, and a missing folder, a file in
// the way, a folder that takes no files (/proc) and a read-only disk are said alike, naming the path.
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CliError } from '../errors.js';

/** Why a path cannot be written, by its error's code; ENOENT is told by whether its folder is there. */
const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'part of that path is a file, not a folder',
  EISDIR: 'it is a folder',
  ENOSPC: 'the disk is full',
};

async function isFolder(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/**
 * The error of a write to `path` that failed, for people: `named` is how the user gave it (`--output x.har`).
 * Any error that is not about the path is returned as it is.
 */
async function outputProblem(error: unknown, path: string, named: string): Promise<unknown> {
  const { code, syscall } = error as NodeJS.ErrnoException;
  const folder = dirname(resolve(path));
  let reason = REASONS[code ?? ''];
  if (code === 'EEXIST' && syscall === 'mkdir') reason = REASONS.ENOTDIR;
  if (code === 'ENOENT')
    reason = (await isFolder(folder))
      ? `the folder ${folder} takes no new files (a file system such as /proc)`
      : `its folder ${folder} does not exist: make it first (mkdir -p ${folder})`;
  if (!reason) return error;
  return new CliError(`${named}: cannot write it: ${reason}. Give a path in a folder you can write to.`);
}

/** Writes `text` to `path` (made or replaced), or says why it cannot. `named`: as the user gave it. */
export async function writeOutputFile(
  path: string,
  text: string,
  { named = `--output ${path}`, flag = 'w', mode }: { named?: string; flag?: 'w' | 'wx'; mode?: number } = {},
): Promise<void> {
  try {
    await writeFile(path, text, { flag, ...(mode === undefined ? {} : { mode }) });
  } catch (error) {
    throw await outputProblem(error, path, named);
  }
}

/** Makes the folder `path` (not the ones above it) unless it is there, or says why it cannot. */
export async function makeOutputFolder(path: string, named = `--output ${path}`): Promise<void> {
  try {
    await mkdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST' && (await isFolder(path))) return;
    throw await outputProblem(error, path, named);
  }
}
