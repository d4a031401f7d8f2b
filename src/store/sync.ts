import { closeSync, fdatasync, fsync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';

export const fdatasyncAsync = promisify(fdatasync);
const fsyncAsync = promisify(fsync);

/** Writes all of `bytes` to `fd` (a write may take only part); throws ENOSPC when the disk takes none. */
export function writeAll(fd: number, bytes: Buffer, path: string): void {
  for (let offset = 0; offset < bytes.length;) {
    const written = writeSync(fd, bytes, offset);
    if (written === 0)
      throw Object.assign(new Error(`ENOSPC: no space left on device, writing ${path}`), {
        code: 'ENOSPC',
        syscall: 'write',
        path,
      });
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

/**
 * Cuts a file of lines after its last newline (a torn last line, a crash's), reading back from the end; a
 * file that does not exist is left so. Returns its length after.
 */
export function cutTornEnd(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    const chunk = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const read = readSync(fd, chunk, 0, end - start, start);
      const newline = chunk.subarray(0, read).lastIndexOf(0x0a);
      if (newline !== -1) {
        end = start + newline + 1;
        break;
      }
      end = start;
    }
    if (end < size) ftruncateSync(fd, end);
    return end;
  } finally {
    closeQuietly(fd);
  }
}
