import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { searchCaptures } from '../../src/inspector/search.js';
import { type Capture, CaptureStore, encodeBody } from '../../src/store/index.js';
import { sampleCapture } from '../helpers/capture.js';
import { tempDir } from '../helpers/sandbox.js';

let dir: { path: string; remove: () => Promise<void> };
let store: CaptureStore;
beforeEach(async () => {
  dir = await tempDir();
  store = await CaptureStore.open({ path: join(dir.path, 'captures.json') });
});
afterEach(async () => {
  await store.close();
  await dir.remove();
});

/** A delivery of event `eventId` whose body is `text`. */
async function deliver(eventId: string, text: string): Promise<Capture> {
  const bytes = Buffer.from(text);
  const capture = sampleCapture(eventId, { ...encodeBody(bytes), bodySize: bytes.length });
  await store.add(capture);
  return store.get(capture.id) as Capture;
}

const ids = (captures: Capture[]) => captures.map((c) => c.envelope?.id);

describe('searchCaptures: the search box over the whole store', () => {
  it('finds, newest first and whatever the case, text in a body, in an event id, and in the tail of a body kept in a file', async () => {
    await deliver('evt_a', '{"employee":"Ada Lovelace"}');
    await deliver('evt_b', '{"employee":"Grace Hopper"}');
    const large = await deliver('evt_large', `{"pad":"${'p'.repeat(100_000)}","employee":"ADA tail"}`);
    expect(large.bodyFile).toBeDefined(); // the capture holds only the first 16 KiB
    expect(large.body).not.toContain('ADA tail');

    expect(ids((await searchCaptures(store, 'ada')).captures)).toEqual(['evt_large', 'evt_a']);
    expect(ids((await searchCaptures(store, '  EVT_B ')).captures)).toEqual(['evt_b']);
    expect(await searchCaptures(store, 'nobody')).toEqual({
      query: 'nobody',
      captures: [],
      truncated: false,
      partial: false,
    });
  });

  it('returns at most `limit` matches and says there were more', async () => {
    for (let i = 0; i < 5; i++) await deliver(`evt_${i}`, '{"n":"match"}');
    const result = await searchCaptures(store, 'match', { limit: 3 });
    expect(ids(result.captures)).toEqual(['evt_4', 'evt_3', 'evt_2']);
    expect(result.truncated).toBe(true);
  });

  it('stops reading body files once its budget is spent, and says so; a body file gone is passed over', async () => {
    const first = await deliver('evt_first', `{"pad":"${'a'.repeat(40_000)}","x":"needle"}`);
    await deliver('evt_second', `{"pad":"${'b'.repeat(40_000)}","x":"needle"}`);
    // The budget covers the newer file only.
    const budgeted = await searchCaptures(store, 'needle', { fileBudget: 30_000 });
    expect(ids(budgeted.captures)).toEqual(['evt_second']);
    expect(budgeted.partial).toBe(true);
    await rm(join(dir.path, first.bodyFile as string));
    expect(await searchCaptures(store, 'needle')).toMatchObject({
      partial: false,
      captures: [expect.objectContaining({ envelope: expect.objectContaining({ id: 'evt_second' }) })],
    });
  });
});
