import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { type Capture, newCaptureId } from '../../src/store/index.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import { JournalAdapter, type StoreData } from '../../src/store/journal.js';
import { tempDir } from '../helpers/sandbox.js';

let dir: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => dir.remove());

/** A real journal on disk that also counts its fsyncs. */
class CountingJournal extends JournalAdapter {
  syncs = 0;
  override async sync(): Promise<void> {
    this.syncs += 1;
    await super.sync();
  }
}

const capture = (i: number) => ({ id: newCaptureId(), envelope: { id: `evt_${i}` } }) as unknown as Capture;

describe('GroupCommit with a minimum interval between fsyncs', () => {
  it('never holds a lone change, and lets a burst share the next fsync', async () => {
    const journal = new CountingJournal(join(dir.path, 'captures.json'), { logger: silentLogger, compactAfterBytes: 1 << 30, now: Date.now });
    const data: StoreData = { version: 1, captures: [] };
    let clock = 1_000;
    const sleeps: number[] = [];
    let wake: () => void = () => {};
    const commit = new GroupCommit(journal, () => data, {
      minSyncIntervalMs: 2,
      now: () => clock,
      sleep: (ms) => {
        sleeps.push(ms);
        return new Promise<void>((resolve) => (wake = resolve));
      },
    });

    journal.put(capture(0));
    await commit.stage().durable;
    expect(sleeps).toEqual([]); // the first fsync starts at once
    expect(journal.syncs).toBe(1);

    // Right after it (same clock): the next fsync waits out the interval, and everything staged
    // while it waits is covered by that one fsync.
    journal.put(capture(1));
    const second = commit.stage();
    await second.written;
    await new Promise((resolve) => setImmediate(resolve));
    expect(sleeps).toEqual([2]);
    const late = [2, 3, 4].map((i) => {
      journal.put(capture(i));
      return commit.stage();
    });
    await Promise.all(late.map((s) => s.written));
    clock += 2;
    wake();
    await Promise.all([second.durable, ...late.map((s) => s.durable)]);
    expect(journal.syncs).toBe(2);
    const lines = (await readFile(journal.journalPath, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(5);

    // Long after the last fsync: no waiting again.
    clock += 1_000;
    journal.put(capture(5));
    await commit.stage().durable;
    expect(sleeps).toEqual([2]);
    expect(journal.syncs).toBe(3);
    journal.close();
  });
});
