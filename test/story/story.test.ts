import { describe, expect, it } from 'vitest';
import type { Capture } from '../../src/store/index.js';
import {
  captureStoryOf,
  decideKind,
  eventStoryOf,
  failedToResend,
  inTime,
  isFailedNow,
  storiesOf,
  withStory,
} from '../../src/story/index.js';
import { sampleCapture } from '../helpers/capture.js';

const T0 = Date.parse('2026-11-27T10:00:00Z');
let seq = 0;

/** A capture of `eventId` arriving `atS` seconds after T0 and answered `status` (null: no answer yet) in `ms`. */
function arrive(
  eventId: string,
  atS: number,
  status: number | null | 'pending',
  extra: Partial<Capture> = {},
): Capture {
  const at = T0 + atS * 1000;
  const id = `cap_${at.toString(36).padStart(9, '0')}${(seq++).toString(36).padStart(3, '0')}aaaa`;
  const forward =
    status === 'pending'
      ? undefined
      : {
          target: 'http://app/',
          statusCode: status,
          headers: {},
          body: '',
          bodyEncoding: 'utf8' as const,
          durationMs: 20,
        };
  return sampleCapture(eventId, { id, receivedAt: new Date(at).toISOString(), forward, ...extra });
}

/** Captures in order, each with its kind decided on arrival as the listener does. */
function asListened(...captures: Capture[]): Capture[] {
  const held: Capture[] = [];
  for (const capture of captures)
    held.push({ ...capture, ...decideKind(capture, held, { edited: capture.body !== '{}' }) });
  return held;
}

const kinds = (captures: Capture[]) => {
  const story = eventStoryOf('evt_a', captures, { now: T0 });
  return captures.map((c) => story.deliveries[c.id].words);
};

describe('what each capture of an event is', () => {
  it('numbers the retries after deliveries the app did not take', () => {
    const held = asListened(arrive('evt_a', 0, 500), arrive('evt_a', 60, null), arrive('evt_a', 360, 503));
    expect(kinds(held)).toEqual(['first delivery', 'retry 1', 'retry 2']);
    expect(held.map((c) => c.duplicateOf)).toEqual([null, null, null]);
    expect(held[1].repeatOf).toBe(held[0].id);
  });

  it('calls a delivery after a 2xx a duplicate, naming the capture the app took', () => {
    const held = asListened(arrive('evt_a', 0, 500), arrive('evt_a', 60, 200), arrive('evt_a', 120, 200));
    expect(kinds(held)).toEqual(['first delivery', 'retry 1', 'duplicate (the app had taken it)']);
    expect(held[2].duplicateOf).toBe(held[1].id);
  });

  it('counts a replay the app took: the service delivering again after it is a duplicate', () => {
    const first = arrive('evt_a', 0, 500);
    const replay = arrive('evt_a', 10, 200, { source: 'replay', replayOf: first.id });
    const edited = arrive('evt_a', 20, 200, { source: 'replay', replayOf: first.id, body: '{"x":1}' });
    const held = asListened(first, replay, edited, arrive('evt_a', 60, 200));
    expect(kinds(held)).toEqual(['first delivery', 'replay', 'edited replay', 'duplicate (the app had taken it)']);
  });

  it('calls a delivery that arrives while the app still works on the first a retry, not a duplicate', () => {
    // The first was answered 200 after 20 ms, but only from 0.02 s on: a repeat at 0.01 s came before.
    const first = arrive('evt_a', 0, 200);
    const held = asListened(first, arrive('evt_a', 0.01, 200));
    expect(kinds(held)).toEqual(['first delivery', 'retry 1']);
  });

  it('tells a store written before kinds were kept truthfully: a retry once stored as a duplicate', () => {
    const first = arrive('evt_a', 0, 500);
    const legacy = [
      first,
      arrive('evt_a', 60, 200, { duplicateOf: first.id }),
      arrive('evt_a', 90, 200, { duplicateOf: first.id }),
    ];
    expect(kinds(legacy)).toEqual(['first delivery', 'retry 1', 'duplicate (the app had taken it)']);
    const stories = storiesOf(legacy);
    expect(withStory(legacy[1], stories).duplicateOf).toBeNull();
    expect(withStory(legacy[2], stories).duplicateOf).toBe(first.id);
    // Its first delivery let go by retention: an old record that named one is no first delivery.
    expect(kinds([legacy[1]])).toEqual(['retry']);
  });

  it('keeps counting retries when the first was let go', () => {
    const held = asListened(arrive('evt_a', 0, 500), arrive('evt_a', 60, 500), arrive('evt_a', 360, 500));
    expect(kinds(held.slice(1))).toEqual(['retry 1', 'retry 2']);
    const next = decideKind(arrive('evt_a', 2000, 500), held.slice(1));
    expect(next).toMatchObject({ kind: 'retry', retry: 3 });
  });
});

describe("an event's state", () => {
  it('is delivered once a later replay or delivery got a 2xx, and failing while the latest did not', () => {
    const first = arrive('evt_a', 0, 500);
    expect(eventStoryOf('evt_a', [first]).state).toBe('failing');
    const replay = arrive('evt_a', 10, 200, { source: 'replay', replayOf: first.id, kind: 'replay' });
    const story = eventStoryOf('evt_a', [first, replay]);
    expect(story).toMatchObject({ state: 'delivered', failed: false, latest: replay.id, resend: first.id });
  });

  it('says both when a replay was taken here while the service still has attempts to make', () => {
    const [first, retry] = asListened(arrive('evt_a', 0, 500), arrive('evt_a', 60, 503));
    const replay = arrive('evt_a', 70, 200, { source: 'replay', replayOf: retry.id, kind: 'replay' });
    // Told from the deliveries held: retry 1 was attempt 2, so attempt 3 comes (not when: no service asked).
    expect(eventStoryOf('evt_a', [first, retry, replay], { now: T0 })).toMatchObject({
      state: 'delivered',
      failed: false,
      next: { attempt: 3, dueAt: null },
      words:
        'delivered here by a replay; the service still tries again (attempt 3 of 5), and that delivery arrives as a duplicate',
    });
    // The service's view says when; and nothing more once it has given up, or once it was delivered.
    const next = { attempt: 3, dueAt: T0 + 120_000 };
    expect(eventStoryOf('evt_a', [first, retry, replay], { now: T0, service: { next } }).words).toMatch(
      /^delivered here by a replay; the service still tries again in 2 min \(attempt 3 of 5\)/,
    );
    for (const service of [{ ended: 'gave-up' as const }, { delivered: true }])
      expect(eventStoryOf('evt_a', [first, retry, replay], { service })).toMatchObject({
        words: 'delivered',
        next: null,
      });
    // A replay after a delivery the app took: nothing more comes.
    const taken = arrive('evt_b', 0, 200);
    const again = arrive('evt_b', 5, 200, { source: 'replay', replayOf: taken.id, kind: 'replay' });
    expect(eventStoryOf('evt_b', [taken, again]).words).toBe('delivered');
  });

  it('calls a refused request that carries no event rejected, never a failing event', () => {
    const refused = { rejected: { statusCode: 400, code: 'signature_missing' }, forward: undefined };
    const unsigned = arrive('evt_u', 0, null, { ...refused, signature: { status: 'missing' } });
    const noEnvelope = arrive('x', 1, null, { ...refused, envelope: null, signature: { status: 'valid' } });
    for (const capture of [unsigned, noEnvelope]) {
      const story = storiesOf([capture]).get(capture.envelope?.id ?? capture.id);
      expect(story).toMatchObject({ state: 'rejected', failed: false, tone: 'plain' });
      expect(story?.words).toBe(
        'rejected: it carries no event (unsigned, or not an envelope), so nothing sends it again',
      );
    }
    // A delivery of an event signed with another secret is one the service retries: failing.
    const forged = arrive('evt_f', 2, null, { ...refused, signature: { status: 'invalid' } });
    expect(eventStoryOf('evt_f', [forged]).state).toBe('failing');
  });

  it('is pending while its latest is with the app, and takes the service view where it was asked', () => {
    expect(eventStoryOf('evt_a', [arrive('evt_a', 0, 'pending')]).state).toBe('pending');
    const failed = [arrive('evt_a', 0, 500)];
    expect(eventStoryOf('evt_a', failed, { service: { ended: 'gave-up' } }).state).toBe('given-up');
    expect(eventStoryOf('evt_a', failed, { service: { ended: 'disabled' } }).words).toBe(
      'disabled: nothing comes while the endpoint is disabled',
    );
    const next = { attempt: 3, dueAt: T0 + 4 * 60_000 };
    expect(eventStoryOf('evt_a', failed, { now: T0, service: { next } }).words).toBe(
      'failing: the service tries again in 4 min (attempt 3 of 5)',
    );
    expect(eventStoryOf('evt_b', [], { service: { missed: true } })).toMatchObject({
      state: 'missed',
      eventId: 'evt_b',
    });
  });

  it('makes one failed set: the same events for the filter, the listing and the replay', () => {
    const a = arrive('evt_a', 0, 500);
    const aReplay = arrive('evt_a', 5, 200, { source: 'replay', replayOf: a.id, kind: 'replay' });
    const b = arrive('evt_b', 1, 500);
    const bEdited = arrive('evt_b', 6, 500, { source: 'replay', replayOf: b.id, kind: 'edited-replay' });
    const refused = arrive('evt_c', 2, null, {
      rejected: { statusCode: 400, code: 'signature_invalid' },
      forward: undefined,
    });
    const all = [a, b, refused, aReplay, bEdited];
    const stories = storiesOf(all);
    expect(all.filter((c) => isFailedNow(c, stories)).map((c) => c.id)).toEqual([refused.id, bEdited.id]);
    // The replay sends each failed event's newest delivery from the service.
    expect(failedToResend(all).map((c) => c.id)).toEqual([b.id, refused.id]);
    expect(captureStoryOf(bEdited, stories).event).toEqual({
      state: 'failing',
      words: 'failing: the service tries again (attempt 2 of 5)',
      tone: 'bad',
      failed: true,
      latest: true,
    });
  });

  it('never lets a local replay rewrite what the service did', () => {
    // A failed replay of a delivered event leaves it delivered, out of the failed set.
    const [taken] = asListened(arrive('evt_d', 0, 200));
    const failedReplay = arrive('evt_d', 5, 502, { source: 'replay', replayOf: taken.id, kind: 'replay' });
    const delivered = eventStoryOf('evt_d', [taken, failedReplay]);
    expect(delivered).toMatchObject({ state: 'delivered', failed: false, words: 'delivered' });
    expect(failedToResend([taken, failedReplay])).toEqual([]);
    // The replay itself failed, and says so.
    expect(captureStoryOf(failedReplay, storiesOf([taken, failedReplay]))).toMatchObject({
      kind: 'replay',
      outcome: 'failed',
      tone: 'bad',
      status: '502',
      event: { state: 'delivered', failed: false },
    });
    // A re-signed replay of a request that carried no event (unsigned) stays outside the events, ok or failed.
    const refused = { rejected: { statusCode: 400, code: 'signature_missing' }, forward: undefined };
    const unsigned = arrive('evt_u', 0, null, { ...refused, signature: { status: 'missing' } });
    for (const status of [200, 500]) {
      const replay = arrive('evt_u', 5, status, { source: 'replay', replayOf: unsigned.id, kind: 'replay' });
      expect(eventStoryOf('evt_u', [unsigned, replay])).toMatchObject({ state: 'rejected', failed: false });
    }
    const body = arrive('x', 0, null, { ...refused, envelope: null });
    const replayed = arrive('x', 5, 500, { source: 'replay', replayOf: body.id, kind: 'replay', envelope: null });
    expect(storiesOf([body, replayed]).get(replayed.id)).toMatchObject({ state: 'rejected', failed: false });
  });

  it('says from the attempt number what the service does next, and that it gives up after the last', () => {
    const held = asListened(...[0, 60, 360, 2160, 9360].map((s) => arrive('evt_t', s, null)));
    const words = (n: number) => eventStoryOf('evt_t', held.slice(0, n)).words;
    expect(words(1)).toBe('failing: the service tries again (attempt 2 of 5)');
    expect(words(4)).toBe('failing: the service tries again (attempt 5 of 5)');
    // The fifth attempt timed out: the service gives up, it does not try again.
    expect(eventStoryOf('evt_t', held)).toMatchObject({
      state: 'given-up',
      failed: true,
      words: 'given up: the service gave up after its 5 attempts',
      next: null,
    });
  });
});

describe('when the service tries next', () => {
  it('says "in under a minute" rather than 0 min, and "any moment now" once due', () => {
    expect(inTime(T0 + 3_000, T0)).toBe('in under a minute');
    expect(inTime(T0 + 5 * 60_000, T0)).toBe('in 5 min');
    expect(inTime(T0 + 2 * 3_600_000, T0)).toBe('in 2 h');
    expect(inTime(T0 - 1, T0)).toBe('any moment now');
  });
});

describe('a store written by the previous version', () => {
  it('opens, with the listener and with the captures commands, and tells its retries truthfully', async () => {
    const { mkdtemp, rm, writeFile, mkdir } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { CaptureStore, readCaptureStore } = await import('../../src/store/index.js');
    const dir = await mkdtemp(join(tmpdir(), 'clockhook-legacy-'));
    try {
      // As the previous version wrote it: no kind, and a retry after a 500 stored with duplicateOf.
      const first = arrive('evt_old', 0, 500);
      const retry = arrive('evt_old', 60, 200, { duplicateOf: first.id });
      const repeat = arrive('evt_old', 120, 200, { duplicateOf: first.id });
      for (const capture of [first, retry, repeat]) delete (capture as Partial<Capture>).kind;
      await mkdir(join(dir, '.clockhook'));
      const path = join(dir, '.clockhook', 'captures.json');
      await writeFile(path, `${JSON.stringify({ version: 1, captures: [first, retry, repeat] })}\n`);
      const read = await readCaptureStore(path);
      const store = await CaptureStore.open({ path });
      try {
        for (const captures of [read.captures, store.all()]) {
          const stories = storiesOf(captures);
          expect(captures.map((c) => withStory(c, stories).story.words)).toEqual([
            'first delivery',
            'retry 1',
            'duplicate (the app had taken it)',
          ]);
          expect(captures.map((c) => withStory(c, stories).duplicateOf)).toEqual([null, null, first.id]);
        }
        expect(store.ofEvent('evt_old')).toHaveLength(3);
      } finally {
        await store.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
