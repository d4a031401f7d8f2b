import { closeSync, fdatasync, fsync, openSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';

export const fdatasyncAsync = promisify(fdatasync);
const fsyncAsync = promisify(fsync);

/** Writes all of `bytes` to `fd` (a write may take only part); throws ENOSPC when the disk takes none. */
export function writeAll(fd: number, bytes: Buffer, path: string): void {
  for (let offset = 0; offset < bytes.length;) {
    const written = writeSync(fd, bytes, offset);
    if (written === 0)
      throw Object.assign(new Error(`ENOSPC: no space left on device, writing ${path}`), { code: 'ENOSPC' });
    offset += written;
  }
}

/** Fsyncs a folder: the names created, renamed or deleted in it are on the disk once it resolves. */
export async function syncDir(path: string): Promise<void> {
  const fd = openSync(path, 'r');
  try {
    await fsyncAsync(fd);
  } finally {
    closeQuietly(fd);
  }
}

export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}
