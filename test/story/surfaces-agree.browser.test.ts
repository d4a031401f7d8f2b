import { expect, it, describe } from 'vitest';
import { runCli } from '../helpers/cli.js';
import {
  browser,
  cli,
  dir,
  inspector,
  type Json,
  type Recorded,
  listen,
  mcp,
  painted,
  records,
  recordsOf,
  triggered,
  useSurfaces,
} from './surfaces-rig.js';

// One delivery of each kind, told by every surface that renders a capture (the set-up: surfaces-rig.ts). The
// record's judgement (src/story/) is read once, from `captures list --json`; every surface must say the same
// status, time, outcome, words, what comes next and tone.

useSurfaces();

describe('one record of a delivery, judged once', () => {
  it('judges each kind as the contract and the story say', () => {
    const one = (eventId: string, n = 0) => recordsOf(eventId)[n].story;
    expect(one('evt_ok')).toMatchObject({ status: '200', outcome: '2xx', tone: 'ok' });
    expect(one('evt_500')).toMatchObject({ status: '500', outcome: 'failed', tone: 'bad', answer: 'handler broken' });
    expect(one('evt_500').event.words).toBe('failing: the service tries again (attempt 2 of 5)');
    for (const cut of ['evt_cut_length', 'evt_cut_chunked'])
      expect(one(cut)).toMatchObject({ status: '200 cut', outcome: 'failed', tone: 'bad', event: { failed: true } });
    // The fifth attempt timed out: the service gives up, it does not retry.
    expect(one('evt_fifth', 4)).toMatchObject({
      kind: 'retry',
      words: 'retry 4',
      status: 'no answer',
      event: { state: 'given-up', words: 'given up: the service gave up after its 5 attempts' },
    });
    expect(recordsOf('evt_held')[0].forward.waitedMs).toBeGreaterThan(0);
    expect(one('evt_held')).toMatchObject({ status: '200', outcome: '2xx' });
    expect(one('evt_gave_up')).toMatchObject({ status: 'no answer', outcome: 'failed', tone: 'bad' });
    expect(recordsOf('evt_drift_b')[0].drift).toEqual(['data.hours: string, was number']);
    // The replay taken after the service's delivery failed: delivered here, and the service's next attempt said.
    expect(one(triggered.failed, 1)).toMatchObject({ kind: 'replay', outcome: '2xx', event: { state: 'delivered' } });
    expect(one(triggered.failed, 1).event.words).toBe(
      'delivered here by a replay; the service still tries again (attempt 2 of 5), and that delivery arrives as a duplicate',
    );
    // A failed replay of a delivered event leaves it delivered; a re-signed replay of what carried no event
    // leaves it rejected: neither is a failing event.
    expect(one(triggered.taken, 1)).toMatchObject({ kind: 'replay', outcome: 'failed', status: '500' });
    expect(one(triggered.taken, 1).event).toMatchObject({ state: 'delivered', failed: false });
    expect(one('evt_unsigned')).toMatchObject({
      status: '400',
      outcome: 'rejected',
      tone: 'plain',
      words: 'rejected request',
    });
    expect(one('evt_unsigned', 1)).toMatchObject({ kind: 'replay', outcome: '2xx' });
    expect(one('evt_unsigned', 1).event).toMatchObject({ state: 'rejected', failed: false });
  });

  it("listen's own line, captures list and captures show say what the record says", async () => {
    const deliveryLines = () => listen.lines.map((l) => l.text ?? '').filter((l) => /--> .*\[evt_/.test(l));
    const ofEvents = records.filter((r) => r.envelope);
    await expect.poll(() => deliveryLines().length).toBe(ofEvents.length);
    const live = deliveryLines();
    const listed = (await cli('captures', 'list', '--limit', '100')).stdout.trim().split('\n').reverse();
    for (const record of ofEvents) {
      const { story } = record;
      const n = recordsOf(record.envelope!.id).indexOf(record);
      const status = painted(story.tone, `[${story.status}]`);
      const time = story.durationMs === null ? '' : ` (${story.durationMs} ms)`;
      for (const [surface, lines] of [
        ['listen', live],
        ['captures list', listed],
      ] as const) {
        const line = lines.filter((l) => l.includes(`[${record.envelope!.id}]`))[n];
        expect(line, `${surface}: ${record.envelope!.id} #${n}`).toContain(`<-- ${status} POST `);
        if (time) expect(line, `${surface}: ${record.envelope!.id} #${n}`).toContain(time);
        if (story.kind !== 'first') expect(line).toContain(story.words);
        expect(line).not.toMatch(/will retry|aborted/);
      }
      // captures list tells the event's state as it stands now, on its newest capture.
      const line = listed.filter((l) => l.includes(`[${record.envelope!.id}]`))[n];
      if (story.event.latest && story.event.state !== 'delivered')
        expect(line).toContain(painted(story.event.tone, story.event.words));
    }
    for (const record of records.filter((r) => r.envelope?.id.startsWith('evt_'))) {
      expect(JSON.parse((await cli('captures', 'show', record.id, '--json')).stdout).story).toEqual(record.story);
      const shown = (await cli('captures', 'show', record.id)).stdout;
      const time = record.story.durationMs === null ? '' : ` in ${record.story.durationMs} ms`;
      expect(shown).toContain(`${painted(record.story.tone, record.story.status)}`);
      if (record.forward) expect(shown).toContain(`answered ${painted(record.story.tone, record.story.status)}`);
      expect(shown).toContain(time);
      expect(shown).toContain(`the event is ${painted(record.story.event.tone, record.story.event.words)}`);
    }
  }, 60_000);

  it('the MCP tools give the same judgement, every result valid for a strict client', async () => {
    const listed = (await mcp.call('list_captures', { limit: 100 })).data.captures as Json[];
    for (const record of records) {
      const summary = listed.find((c) => c.id === record.id);
      expect(summary?.story, record.id).toEqual(record.story);
      expect(summary).toMatchObject({ outcome: record.story.outcome, durationMs: record.story.durationMs });
      const whole = await mcp.call('get_capture', { id: record.id });
      expect(whole.error, whole.text).toBe(false);
      expect(whole.data.capture.story).toEqual(record.story);
    }
    expect((await mcp.call('get_capture', { id: recordsOf('evt_drift_b')[0].id })).data.capture.drift).toEqual([
      'data.hours: string, was number',
    ]);
    // The failed set: neither the delivered event with a failed replay nor the rejected one.
    const failed = (await mcp.call('list_captures', { status: 'failed', limit: 100 })).data.captures as Json[];
    const failedEvents = new Set(failed.map((c) => c.eventId));
    for (const eventId of [triggered.taken, 'evt_unsigned', 'evt_ok']) expect(failedEvents.has(eventId)).toBe(false);
    for (const eventId of ['evt_500', 'evt_fifth', 'evt_cut_length']) expect(failedEvents.has(eventId)).toBe(true);
  }, 60_000);

  it('events get and get_event tell the event as its captures do, with the service view', async () => {
    for (const eventId of [triggered.taken, triggered.failed]) {
      const { event } = recordsOf(eventId).at(-1)!.story;
      const got = JSON.parse((await runCli(['events', 'get', eventId, '--json'], { cwd: dir.path })).stdout);
      expect(got.story.state).toBe(event.state);
      const asked = await mcp.call('get_event', { eventId });
      expect(asked.data.story.state).toBe(event.state);
      expect(asked.data.story.next?.attempt ?? null).toBe(got.story.next?.attempt ?? null);
    }
    // The service says when its next attempt at the failed event is due; the captures alone say which it is.
    const got = JSON.parse((await runCli(['events', 'get', triggered.failed, '--json'], { cwd: dir.path })).stdout);
    expect(got.story.next.attempt).toBe(2);
    expect(got.story.words).toMatch(
      /^delivered here by a replay; the service still tries again in .*\(attempt 2 of 5\)/,
    );
  }, 30_000);

  it('the page shows the same status, time and tone in each row, and counts the outcomes alike', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await page.goto(inspector);
      await page.getByRole('button', { name: 'By request' }).click();
      const rows = page.locator('#captures li.capture');
      await expect.poll(() => rows.count()).toBe(records.length);
      for (const record of records) {
        const row = page.locator(`#captures li.capture[data-id="${record.id}"]`);
        const chip = row.locator('.chip');
        expect(await chip.textContent(), record.id).toBe(record.story.status);
        expect(await chip.getAttribute('class'), record.id).toBe(`chip ${record.story.tone}`);
        const time = record.story.durationMs === null ? '' : `${record.story.durationMs} ms`;
        expect(await row.locator('.duration').textContent(), record.id).toBe(time);
      }
      // The detail of each forwarded capture: its answer's status and time, as the row and the terminal say them.
      for (const record of records.filter((r) => r.forward)) {
        await page.locator(`#captures li.capture[data-id="${record.id}"]`).click();
        await page.locator('#tab-response').click();
        const cell = (name: string) =>
          page
            .locator('#panel-response tr', { has: page.locator('th', { hasText: new RegExp(`^${name}$`) }) })
            .locator('td');
        // Both at once: the detail of the row clicked before may show the same status.
        const shown = async () => `${await cell('status').textContent()} ${await cell('duration').textContent()}`;
        await expect.poll(shown, { message: record.id }).toBe(`${record.story.status} ${record.story.durationMs} ms`);
      }
      const bars = page.locator('#chart g[role="img"]');
      const labels = await bars.evaluateAll((groups) => groups.map((g) => g.getAttribute('aria-label') ?? ''));
      const counted = { '2xx': 0, failed: 0, rejected: 0 };
      for (const label of labels)
        for (const [, n, outcome] of label.matchAll(/(\d+) (2xx|failed|rejected)/g))
          counted[outcome as keyof typeof counted] += Number(n);
      const expected = { '2xx': 0, failed: 0, rejected: 0 };
      for (const record of records) expected[record.story.outcome as keyof typeof expected] += 1;
      expect(counted).toEqual(expected);
    } finally {
      await page.close();
    }
  }, 60_000);

  it("returns a replay's result after its record: another process reads it answered at once", async () => {
    // Through MCP (its own process reads the store's file), and through the CLI, each read right after.
    const { id } = recordsOf('evt_ok')[0];
    for (let i = 0; i < 3; i++) {
      const replayed = await mcp.call('replay', { captureId: id });
      expect(replayed.error, replayed.text).toBe(false);
      const read = (await mcp.call('get_capture', { id: replayed.data.replayId })).data.capture;
      expect(read.story).toMatchObject({ outcome: '2xx', status: String(replayed.data.status) });
      const line = JSON.parse((await cli('replay', id, '--json')).stdout);
      const shown = JSON.parse((await cli('captures', 'show', line.replayId, '--json')).stdout);
      expect(shown.story).toMatchObject({ outcome: '2xx', status: String(line.status) });
    }
  }, 60_000);

  it("every MCP tool's result over each kind of capture listen makes is valid for a strict client", async () => {
    const [notJson, overBound] = ['not JSON', 'cut'].map((what) =>
      records.find((r) => !r.envelope && (what === 'cut' ? r.bodyTruncated : !r.bodyTruncated)),
    ) as Recorded[];
    const kinds: Record<string, Recorded> = {
      ok: recordsOf('evt_ok')[0],
      failed: recordsOf('evt_500')[0],
      cut: recordsOf('evt_cut_chunked')[0],
      held: recordsOf('evt_held')[0],
      'timed out': recordsOf('evt_fifth')[4],
      unsigned: recordsOf('evt_unsigned')[0],
      'not JSON': notJson,
      drifted: recordsOf('evt_drift_b')[0],
      faulted: recordsOf('evt_faulted')[0],
      replayed: recordsOf(triggered.failed)[1],
      'over the body bound': overBound,
    };
    expect(kinds.faulted.story).toMatchObject({ status: '503' });
    expect(overBound.story).toMatchObject({ status: '413', outcome: 'rejected' });
    // The client checks each result against its tool's output schema: a result that does not fit throws.
    const valid = async (kind: string, tool: string, args: Json) => {
      const got = await mcp.call(tool, args);
      expect(got.error, `${kind}: ${tool}: ${got.text}`).toBe(false);
      return got;
    };
    let previous: Recorded | null = null;
    for (const [kind, record] of Object.entries(kinds)) {
      expect(record, kind).toBeDefined();
      await valid(kind, 'get_capture', { id: record.id });
      const eventId = record.envelope?.id;
      if (eventId) {
        await valid(kind, 'list_captures', { eventId });
        // The service's own events; of one sent here by a test it says where its captures are.
        if (eventId.startsWith('evt_') && !Object.values(triggered).includes(eventId)) {
          const unknown = await mcp.call('get_event', { eventId });
          expect(unknown.text).toMatch(/^The service has no event .*: list_captures with eventId/);
        } else await valid(kind, 'get_event', { eventId });
        await valid(kind, 'wait_for_delivery', { eventId, timeoutMs: 1_000 });
      } else
        await valid(kind, 'wait_for_delivery', { since: records[records.indexOf(record) - 1].id, timeoutMs: 1_000 });
      if (previous) await valid(kind, 'diff_captures', { a: previous.id, b: record.id });
      previous = record;
    }
    // Replays of each kind the app answers at once (not the one it never answers, nor the one cut at capture).
    for (const kind of ['ok', 'failed', 'cut', 'unsigned', 'not JSON', 'drifted', 'faulted', 'replayed']) {
      const replayed = await valid(kind, 'replay', { captureId: kinds[kind].id });
      await valid(kind, 'diff_captures', { a: kinds[kind].id, b: replayed.data.replayId });
    }
    const edited = await valid('edited', 'replay', { captureId: kinds.ok.id, body: '{"id":"evt_ok","edited":true}' });
    expect(edited.data.story).toMatchObject({ kind: 'edited-replay' });
    await valid('edited', 'get_capture', { id: edited.data.replayId });
    // A capture whose body was cut cannot go again as it came: said, naming why.
    const cut = await mcp.call('replay', { captureId: overBound.id });
    expect(cut.error).toBe(true);
    expect(cut.text).toMatch(
      /came with a body of 5 MiB, over what listen keeps in one delivery, and only its first part/,
    );
    for (const tool of ['list_captures', 'list_missed', 'list_endpoints', 'list_event_types'])
      await valid('all', tool, tool === 'list_captures' ? { limit: 100 } : {});
  }, 90_000);
});
