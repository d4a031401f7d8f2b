import { readFile, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import { folderFiles } from './files.js';
import { isProcessAlive } from './lock.js';
import { writePrivateFile } from './private-files.js';

/**
 * `.clockhook/listen.json` while a listen runs: where its listener and its inspector (with the token) are,
 * and which capture store it writes, so that `clockhook replay` sends replays through it.
 */
export interface ListenDiscovery {
  pid: number;
  listener: string;
  inspector: string | null;
  /** The capture store's absolute path. */
  db: string;
  /** When it started (ms since the epoch): what it captured since came while it ran. Absent in older files. */
  startedAt?: number;
  /** It was given a secret without an API key: it started no sandbox, and no command here has an API. */
  offline?: true;
}

export async function writeListenDiscovery(
  path: string,
  info: Omit<ListenDiscovery, 'pid'>,
): Promise<() => Promise<void>> {
  const written: ListenDiscovery = { pid: process.pid, ...info, db: resolve(info.db) };
  await writePrivateFile(path, `${JSON.stringify(written, null, 2)}\n`);
  // Removed only while it names this process: a listen started since in the folder may have replaced it.
  return async () => {
    if ((await readListenDiscovery(path))?.pid === process.pid) await unlink(path).catch(() => {});
  };
}

/** The running listen the file names (by default, the one of the folder run from), or null (none, or one that is gone). */
export async function readListenDiscovery(path = folderFiles().listen): Promise<ListenDiscovery | null> {
  try {
    const info = JSON.parse(await readFile(path, 'utf8')) as ListenDiscovery;
    const valid = Number.isInteger(info.pid) && typeof info.listener === 'string' && typeof info.db === 'string';
    return valid && isProcessAlive(info.pid) ? info : null;
  } catch {
    return null;
  }
}
