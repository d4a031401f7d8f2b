// Waiting for the store of this folder to hold a capture: woken when listen writes to the store's files (its
// journal grows with every capture and answer), not by reading the whole store on a timer; a slow look every
// second covers a file system that does not report changes. The deadline is kept to the next look.
import { watch } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Capture, StoreReading } from '../store/index.js';
import { outcomeOf } from '../story/index.js';
import { type McpContext, readStore, storePath } from './context.js';

/** The longest a wait goes without looking, in case the file system reports no change. */
const LOOK_AT_LEAST_EVERY_MS = 1000;

/** Whether the app has answered a capture, or clockhook refused it itself: what a wait for a delivery waits for. */
export const isAnswered = (c: Capture) => outcomeOf(c) !== 'pending';

export interface WaitOptions {
  timeoutMs: number;
  /** The store's signature (storeSignature) taken before the caller's own reading: unchanged, it is not read again. */
  seen?: string;
  /** Asked at each slow look: throws (and so ends the wait, said) once nothing more can come. */
  stillComing?: () => Promise<void>;
}

/**
 * Reads the store each time it changes until a capture `match` takes is there, or `timeoutMs` has passed; a
 * wait ends early, said, when `stillComing` throws (the folder's listen stopped).
 */
export async function waitForCapture(
  ctx: McpContext,
  match: (capture: Capture) => boolean,
  { timeoutMs, seen: given, stillComing = async () => {} }: WaitOptions,
): Promise<{ reading: StoreReading; found: Capture } | null> {
  const deadline = Date.now() + timeoutMs;
  let wake: (() => void) | null = null;
  let changed = false;
  // The folder, not the file: the journal is made anew when the store is compacted.
  const watcher = watchQuietly(dirname(storePath(ctx)), () => {
    changed = true;
    wake?.();
  });
  // Read first only when the store changed since the caller's own reading (or there was none).
  let seen = await storeSignature(ctx);
  if (given === undefined || seen !== given) changed = true;
  try {
    for (;;) {
      if (changed) {
        changed = false;
        const reading = await readStore(ctx);
        const found = reading.captures.findLast(match);
        if (found) return { reading, found };
      }
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, LOOK_AT_LEAST_EVERY_MS));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
      await stillComing();
      // The slow look: the store read again only when its files changed.
      const now = await storeSignature(ctx);
      if (now !== seen) changed = true;
      seen = now;
    }
  } finally {
    watcher?.close();
  }
}

/** fs.watch on `dir`, or null where it cannot be had (the slow look then does the work). */
function watchQuietly(dir: string, onChange: () => void) {
  try {
    const watcher = watch(dir, onChange);
    watcher.on('error', () => {});
    return watcher;
  } catch {
    return null;
  }
}

/** The sizes and times of the store's files: what changes when listen writes to it. */
export async function storeSignature(ctx: McpContext): Promise<string> {
  const path = storePath(ctx);
  const of = (file: string) =>
    stat(file).then(
      (s) => `${s.size}:${s.mtimeMs}`,
      () => '-',
    );
  return `${await of(path)}|${await of(`${path}.journal`)}`;
}
