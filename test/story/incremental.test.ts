import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureTexts, RECENT_DELIVERIES } from '../../src/inspector/protocol.js';
import { type Capture, CaptureStore } from '../../src/store/index.js';
import { decideKind, StoryBook, storiesOf } from '../../src/story/index.js';
import { sampleCapture } from '../helpers/capture.js';
import { tempDir } from '../helpers/sandbox.js';

const T0 = Date.parse('2026-11-27T10:00:00Z');
let seq = 0;

/** A capture of `eventId` arriving `atMs` after T0, not answered yet. */
function arriving(eventId: string, atMs: number, extra: Partial<Capture> = {}): Capture {
  const at = T0 + atMs;
  const id = `cap_${at.toString(36).padStart(9, '0')}${(seq++).toString(36).padStart(4, '0')}aaa`;
  return sampleCapture(eventId, { id, receivedAt: new Date(at).toISOString(), ...extra });
}

const answered = (status: number): Capture['forward'] => ({
  target: 'http://app/',
  statusCode: status,
  headers: {},
  body: '',
  bodyEncoding: 'utf8',
  durationMs: 2,
});

/**
 * A store in memory that tells a book of every change, as CaptureStore does, and counts the captures the
 * book reads: the story's only way to see a capture, so its count is the work a delivery costs it.
 */
function countedBook() {
  const byId = new Map<string, Capture>();
  const counter = { reads: 0 };
  const book = new StoryBook((id) => {
    counter.reads += 1;
    return byId.get(id);
  });
  /** One delivery as the listener takes it: decided, stored, answered, then its report and its page message. */
  const deliver = (capture: Capture, status: number) => {
    const decided = book.decide(capture);
    const stored = { ...capture, ...decided };
    byId.set(stored.id, stored);
    book.added(stored);
    const done = { ...stored, forward: answered(status) };
    byId.set(done.id, done);
    book.changed(stored, done);
    book.captureStory(done, T0);
    book.storiesOf([done], { now: T0, recent: 16 });
    return done;
  };
  return { book, counter, deliver };
}

describe('the story of a store, kept as captures come', () => {
  it('costs the 10,000th capture of one event what the first cost (captures read, counted)', () => {
    for (const status of [200, 500]) {
      const { counter, deliver } = countedBook();
      const perBlock: number[] = [];
      let last: Capture | undefined;
      for (let block = 0; block < 10; block++) {
        const before = counter.reads;
        for (let i = 0; i < 1000; i++) last = deliver(arriving(`evt_one_${status}`, (block * 1000 + i) * 10), status);
        perBlock.push((counter.reads - before) / 1000);
      }
      // Flat: the last thousand read no more than the second (the very first reads nothing), a handful each.
      expect(perBlock.at(-1)).toBeLessThanOrEqual(perBlock[1]);
      expect(Math.max(...perBlock)).toBeLessThan(24);
      // And still told truthfully: a 200 makes each later one a duplicate, a 500 each later one a retry.
      expect(last?.kind).toBe(status === 200 ? 'duplicate' : 'retry');
      if (status === 500) expect(last?.retry).toBe(9_999);
    }
  });

  it("tells a page a burst of one event's captures in messages that each cost the same", () => {
    const { book, deliver } = countedBook();
    const burst: Capture[] = [];
    for (let i = 0; i < 400; i++) burst.push(deliver(arriving('evt_burst', i * 10), 200));
    // One flush of the page's messages (listen's inspector sends what changed every few ms): a hundred, then all.
    const sizes = [100, 400].map((count) => {
      const flushed = burst.slice(-count);
      const stories = book.storiesOf(flushed, { now: T0, recent: RECENT_DELIVERIES });
      const texts = captureTexts(flushed, stories, (capture) => JSON.stringify(capture));
      const messages = texts.map((text) => JSON.parse(text));
      // Each message tells its own capture and the event's newest few, as JSON.
      for (const [i, message] of messages.entries()) {
        expect(message.capture).toEqual(flushed[i]);
        expect(message.story.deliveries[flushed[i].id].words).toBe(
          i === 0 && count === 400 ? 'first delivery' : 'duplicate (the app had taken it)',
        );
        expect(Object.keys(message.story.deliveries).length).toBeLessThanOrEqual(RECENT_DELIVERIES + 1);
      }
      return texts.reduce((sum, text) => sum + text.length, 0) / texts.length;
    });
    // The same bytes a message, whether the flush held a hundred captures of the event or four hundred.
    expect(Math.abs(sizes[1] - sizes[0])).toBeLessThan(sizes[0] * 0.05);
  });

  it('tells every event as the captures read whole do, through retention, answers, replays and Clear', async () => {
    const dir = await tempDir();
    const store = await CaptureStore.open({ path: join(dir.path, 'captures.json'), maxCaptures: 40 });
    try {
      const book = StoryBook.watching(store, () => T0);
      let random = 7;
      const next = (n: number) => (random = (random * 1103515245 + 12345) % 2 ** 31) % n;
      for (let i = 0; i < 160; i++) {
        const eventId = `evt_${next(6)}`;
        const held = store.all().filter((c) => c.envelope?.id === eventId);
        const replayOf = next(5) === 0 ? held.at(-1)?.id : undefined;
        const arrival = arriving(eventId, i * 1000, replayOf ? { source: 'replay', replayOf } : {});
        const edited = next(2) === 0;
        const decided = book.decide(arrival, { edited });
        expect(decided).toEqual(decideKind(arrival, held, { edited }));
        const capture = { ...arrival, ...decided };
        await store.add(capture);
        if (next(4) > 0) await store.update(capture.id, { forward: answered([200, 500, 503][next(3)]) });
        if (i === 120) {
          for (const c of store.all().filter(() => next(3) === 0)) await store.update(c.id, { pinned: true });
          await store.clear();
        }
        expect(book.everyStory(T0)).toEqual(storiesOf(store.all(), T0));
      }
    } finally {
      await store.close();
      await dir.remove();
    }
  });
});
