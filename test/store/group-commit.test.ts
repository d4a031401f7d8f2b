import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { type Capture, newCaptureId } from '../../src/store/index.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import { JournalAdapter } from '../../src/store/journal.js';
import type { StoreData } from '../../src/store/snapshot.js';
import { tempDir } from '../helpers/sandbox.js';
import { recordingLogger } from '../helpers/logger.js';
import { openFiles } from '../helpers/open-files.mjs';

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
  it('never holds a change that comes alone, and lets a burst share the next fsync', async () => {
    const journal = new CountingJournal(join(dir.path, 'captures.json'), {
      logger: silentLogger,
      compactAfterBytes: 1 << 30,
      now: Date.now,
    });
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
    const stage = (i: number) => {
      journal.put(capture(i));
      return commit.stage();
    };

    await stage(0).durable;
    expect(sleeps).toEqual([]); // the first fsync starts at once
    expect(journal.syncs).toBe(1);
    // Right after it (same clock), one more that came alone, as from a sender waiting for each answer:
    // nothing would ride along with it, so it is not held either.
    await stage(1).durable;
    expect(sleeps).toEqual([]);
    expect(journal.syncs).toBe(2);

    // Two together (a burst): their fsync starts at once, and covers both.
    await Promise.all([stage(2).durable, stage(3).durable]);
    expect(journal.syncs).toBe(3);
    // Right after a burst, the next fsync waits out the interval, and everything staged while it
    // waits is covered by that one fsync.
    const next = stage(4);
    await next.written;
    await new Promise((resolve) => setImmediate(resolve));
    expect(sleeps).toEqual([2]);
    const late = [5, 6, 7].map(stage);
    await Promise.all(late.map((s) => s.written));
    clock += 2;
    wake();
    await Promise.all([next.durable, ...late.map((s) => s.durable)]);
    expect(journal.syncs).toBe(4);
    const lines = (await readFile(journal.journalPath, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(8);

    // Long after the last fsync: no waiting again.
    clock += 1_000;
    await stage(8).durable;
    expect(sleeps).toEqual([2]);
    expect(journal.syncs).toBe(5);
    journal.close();
  });
});

/** A real journal whose snapshots wait for `release` (or fail with `fail`). */
class GatedJournal extends JournalAdapter {
  snapshots = 0;
  #gate: { release: () => void; fail: (error: Error) => void } | null = null;
  #waiters: (() => void)[] = [];

  /** Resolves once a snapshot is waiting at the gate. */
  waiting(): Promise<void> {
    return this.#gate ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    this.#gate?.release();
    this.#gate = null;
  }

  fail(error: Error): void {
    this.#gate?.fail(error);
    this.#gate = null;
  }

  protected override async writeSnapshot(pieces: Iterable<string>): Promise<void> {
    this.snapshots += 1;
    await new Promise<void>((release, fail) => {
      this.#gate = { release, fail };
      for (const wake of this.#waiters.splice(0)) wake();
    });
    await super.writeSnapshot(pieces);
  }
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
const settledWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(() => 'settled'),
    new Promise((resolve) => setTimeout(() => resolve('still waiting'), ms)),
  ]);

/** A gated journal with a group commit over it, on a clock the test moves: `store(i)` stages capture i. */
function rig() {
  const logger = recordingLogger();
  const { warnings } = logger;
  const clock = { now: Date.now() };
  const journal = new GatedJournal(join(dir.path, 'captures.json'), {
    logger,
    compactAfterBytes: 2048,
    now: () => clock.now,
  });
  const data: StoreData = { version: 1, captures: [] };
  const commit = new GroupCommit(journal, () => data);
  const store = (i: number) => {
    const c = capture(i);
    data.captures.push(c);
    journal.put(c);
    return commit.stage();
  };
  const reread = async () =>
    (
      await new JournalAdapter(journal.path, { logger: silentLogger, compactAfterBytes: 2048, now: Date.now }).read()
    )?.captures.map((c) => c.envelope?.id);
  return { journal, data, store, reread, warnings, clock, logger };
}

describe('GroupCommit folding the journal into a snapshot', () => {
  it('goes on storing while the snapshot is written, and a crash at any point loses nothing', async () => {
    const { journal, store, reread } = rig();
    // Until the journal outgrows 2 KiB and an fsync's turn starts a fold.
    let i = 0;
    while (journal.snapshots === 0) await store(i++).durable;
    await journal.waiting();
    const folded = i;
    expect(await exists(journal.foldingPath)).toBe(true);

    // The snapshot is not written yet; new captures are durable all the same.
    const during = [store(i++), store(i++)];
    expect(await settledWithin(Promise.all(during.map((s) => s.durable)), 5_000)).toBe('settled');
    const all = Array.from({ length: i }, (_, n) => `evt_${n}`);
    // A crash now: no new snapshot yet, the folded journal and the new one hold everything, in order.
    expect(await reread()).toEqual(all);

    journal.release();
    await journal.folded();
    expect(await exists(journal.foldingPath)).toBe(false);
    const snapshot = JSON.parse(await readFile(journal.path, 'utf8')) as StoreData;
    expect(snapshot.captures.map((c) => c.envelope?.id)).toEqual(all.slice(0, folded)); // as it was when the fold began
    expect(await reread()).toEqual(all);
    journal.close();
  });

  /** A journal of 20 captures starting a fold (`folding`), and capture 99 stored the moment after. */
  function foldingWithLate() {
    const journal = new JournalAdapter(join(dir.path, 'captures.json'), {
      logger: silentLogger,
      compactAfterBytes: 1024,
      now: Date.now,
    });
    const data: StoreData = { version: 1, captures: Array.from({ length: 20 }, (_, i) => capture(i)) };
    for (const c of data.captures) journal.put(c);
    const folding = journal.fold(data);
    const late = capture(99);
    data.captures.push(late);
    journal.put(late);
    return { journal, folding };
  }

  it('takes the snapshot when the fold begins: a capture stored a moment later goes to the new journal only', async () => {
    // Its body file may not be written yet when the snapshot is: the snapshot must not name it.
    const { journal, folding } = foldingWithLate();
    await folding;
    journal.append();
    await journal.sync();
    await journal.folded();
    const snapshot = JSON.parse(await readFile(journal.path, 'utf8')) as StoreData;
    expect(snapshot.captures.map((c) => c.envelope?.id)).not.toContain('evt_99');
    expect(snapshot.captures).toHaveLength(20);
    expect(
      (await readFile(journal.journalPath, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).capture.envelope.id),
    ).toEqual(['evt_99']);
    journal.close();
  });

  it('keeps one journal open when a capture is appended while the fold syncs the old one', async () => {
    const { journal, folding } = foldingWithLate();
    /** This process's open files that are the journal: a file left open would hold its disk space once deleted. */
    const openJournals = async () =>
      (await openFiles(process.pid)).filter((file) => file.startsWith(journal.journalPath)).length;
    // While the fold waits for the old journal's fsync, the next batch is appended: it opens the new journal.
    journal.append();
    await folding;
    await journal.folded();
    expect(await openJournals()).toBe(1);
    journal.close();
    expect(await openJournals()).toBe(0);
  });

  it('keeps the folded journal when the snapshot fails, and folds it in with the next, whole, compaction', async () => {
    const { journal, store, reread, warnings, clock, logger } = rig();
    let i = 0;
    while (journal.snapshots === 0) await store(i++).durable; // the batch the fold covered is durable
    await journal.waiting();
    journal.fail(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }));
    await journal.folded();
    expect(warnings.join('\n')).toMatch(
      /Could not rewrite the capture store .*ENOSPC.*Nothing is lost and deliveries go on: each is kept in .*captures\.json\.journal .*trying again every 30 s/,
    );
    expect(await exists(journal.foldingPath)).toBe(true);
    expect(journal.canFold).toBe(false);
    // Housekeeping waits before trying again: deliveries meanwhile only append (and the failure was said once).
    expect(journal.compactionDue).toBe(false);
    await store(i++).durable;
    expect(journal.snapshots).toBe(1);
    clock.now += 30_000;
    expect(journal.compactionDue).toBe(true);
    expect(await reread()).toEqual(Array.from({ length: i }, (_, n) => `evt_${n}`));

    // The next fsync's turn is a whole compaction: it holds appends, and leaves one snapshot.
    const next = store(i++);
    await journal.waiting();
    journal.release();
    await next.durable;
    expect(journal.snapshots).toBe(2);
    expect(warnings).toHaveLength(1);
    expect(logger.infos.join('\n')).toMatch(/rewritten again/);
    expect(await exists(journal.foldingPath)).toBe(false);
    const snapshot = JSON.parse(await readFile(journal.path, 'utf8')) as StoreData;
    expect(snapshot.captures).toHaveLength(i);
    expect(await reread()).toEqual(Array.from({ length: i }, (_, n) => `evt_${n}`));
    journal.close();
  });
});

describe('GroupCommit when housekeeping cannot be done', () => {
  it('keeps deliveries durable when a whole compaction fails, and says it once', async () => {
    const { journal, store, clock, logger, reread } = rig();
    const enospc = () => Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    let i = 0;
    while (journal.snapshots === 0) await store(i++).durable;
    await journal.waiting();
    journal.fail(enospc());
    await journal.folded();
    clock.now += 30_000;
    // Now a whole compaction is due, and the disk has no room for it either: the delivery is durable all the same.
    const next = store(i++);
    await journal.waiting();
    journal.fail(enospc());
    await expect(next.durable).resolves.toBeUndefined();
    expect(logger.warnings).toHaveLength(1);
    expect(journal.compactionDue).toBe(false);
    expect(await reread()).toEqual(Array.from({ length: i }, (_, n) => `evt_${n}`));
    journal.close();
  });
});
