import { mkdirSync, openSync, renameSync, unlinkSync } from 'node:fs';
import { readdir, readFile, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from '../logger.js';
import type { Capture } from './capture.js';
import { closeQuietly, fdatasyncAsync, syncDir, writeAll } from './sync.js';

/**
 * Bodies over INLINE_BODY_CHARS, one file of raw bytes per capture in `<store>.bodies/`, so the store in
 * memory and its journal hold only their beginning. A body is written with the journal append that names
 * its capture (before it), and fsynced with that append's fsync.
 */
export class BodyFiles {
  readonly dir: string;
  /** Bodies to write, each to a file of its own, with the next append. */
  #pending: { name: string; bytes: Buffer }[] = [];
  /** Body files written and still open: the next sync fsyncs and closes them. */
  #unsynced: number[] = [];

  constructor(
    readonly storePath: string,
    private readonly logger: Logger,
  ) {
    this.dir = `${storePath}.bodies`;
  }

  /** `bodyFile` of a capture whose body is kept apart under `name`: relative to the store's folder. */
  fileFor(name: string): string {
    return `${basename(this.dir)}/${name}`;
  }

  /** Records a body to write, as its own file, with the next append (before the journal line naming it). */
  put(name: string, bytes: Buffer): void {
    this.#pending.push({ name, bytes });
  }

  /** The bytes of a body kept apart. */
  async read(bodyFile: string): Promise<Buffer> {
    const path = join(dirname(this.storePath), bodyFile);
    // The file name comes from the store file: it must not lead out of the bodies folder.
    if (resolve(dirname(path)) !== resolve(this.dir)) throw new Error(`${bodyFile} is not a file in ${this.dir}.`);
    return readFile(path);
  }

  /** Deletes the files of bodies that left the store (retention, clear); ones not written yet are dropped. */
  async remove(bodyFiles: string[]): Promise<void> {
    const names = new Set(bodyFiles.map((file) => basename(file)));
    this.#pending = this.#pending.filter((body) => !names.has(body.name));
    await Promise.all(
      [...names].map((name) =>
        unlink(join(this.dir, name)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') this.logger.warn(`Could not delete ${join(this.dir, name)}: ${error.message}`);
        }),
      ),
    );
  }

  /** Deletes body files no capture names: left by a crash between a body's write and its journal line. */
  async removeOrphans(captures: readonly Capture[]): Promise<void> {
    // Only files named as clockhook names bodies (a capture's id, `.partial` while written) are its own.
    const names = (await readdir(this.dir).catch(() => [] as string[])).filter((name) =>
      /^cap_\w+(\.partial)?$/.test(name),
    );
    if (names.length === 0) return;
    const kept = new Set(captures.flatMap((c) => (c.bodyFile ? [basename(c.bodyFile)] : [])));
    await this.remove(names.filter((name) => !kept.has(name)).map((name) => this.fileFor(name)));
  }

  /**
   * Writes the pending bodies, each to its own file, left open for `sync`. A body that cannot be written
   * fails the append (the deliveries of the batch are answered 503, so the service sends them again) and
   * is given up: one body too large for the disk's free space must not fail every delivery after it. Its
   * capture keeps the body's beginning. A file gets its name only once it is whole.
   */
  write(): void {
    while (this.#pending.length > 0) {
      const { name, bytes } = this.#pending.shift() as { name: string; bytes: Buffer };
      const path = join(this.dir, name);
      const partial = `${path}.partial`;
      let fd: number | null = null;
      try {
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
        fd = openSync(partial, 'w', 0o600);
        writeAll(fd, bytes, path);
        renameSync(partial, path);
        this.#unsynced.push(fd);
      } catch (error) {
        if (fd !== null) {
          closeQuietly(fd);
          try {
            unlinkSync(partial);
          } catch {
            // no capture names it: the next start removes it
          }
        }
        throw error;
      }
    }
  }

  /** Fsyncs the body files written so far, then their folder (new names are entries in it), and closes them. */
  async sync(): Promise<void> {
    const fds = this.#unsynced.splice(0);
    if (fds.length === 0) return;
    try {
      // Settled, not raced: every fd is closed below, and none may be while its fsync runs.
      const results = await Promise.allSettled(fds.map((fd) => fdatasyncAsync(fd)));
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
      await syncDir(this.dir);
    } finally {
      for (const fd of fds) closeQuietly(fd);
    }
  }

  close(): void {
    for (const fd of this.#unsynced.splice(0)) closeQuietly(fd);
  }
}
