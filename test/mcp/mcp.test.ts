import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDelivery } from '../../src/testing/index.js';
import { runCli } from '../helpers/cli.js';
import { post } from '../helpers/listen.js';
import { connectClient, startInspectedSession } from '../helpers/inspector.js';
import { type McpUnderTest, startMcp } from '../helpers/mcp.js';

// A real `clockhook mcp` over stdio, driven by the SDK's own client (which checks every result against its
// tool's output schema), beside a real listen with its embedded sandbox (retries 10 times sooner: attempt 2
// comes 6 s after the first) and an app on port 0 that fails until it is fixed.
type Json = Record<string, any>;
let t: Awaited<ReturnType<typeof startInspectedSession>>;
let m: McpUnderTest;
const servers: McpUnderTest[] = [];

beforeAll(async () => {
  t = await startInspectedSession({ timeScale: 0.1 });
  m = await startMcp(t.dir);
  servers.push(m);
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  await t?.close();
});

/** The paths in a JSON schema of objects that do not name their fields (records, with propertyNames, do). */
function unnamedObjects(schema: Json, path = '$'): string[] {
  const nested = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap((s: Json) => unnamedObjects(s, path));
  if (schema.items) nested.push(...unnamedObjects(schema.items, `${path}[]`));
  const types = [schema.type].flat();
  if (!types.includes('object')) return nested;
  if (schema.propertyNames) return [...nested, ...unnamedObjects(schema.additionalProperties ?? {}, `${path}{}`)];
  if (!schema.properties || schema.additionalProperties !== false) return [...nested, path];
  return [
    ...nested,
    ...Object.entries(schema.properties).flatMap(([key, value]) => unnamedObjects(value as Json, `${path}.${key}`)),
  ];
}

describe('clockhook mcp', () => {
  it("lists its tools: every input described, every result's fields named, and a prompt", async () => {
    expect(m.tools.map((tool) => tool.name).sort()).toEqual(
      [
        'check_receiver',
        'diff_captures',
        'get_capture',
        'get_event',
        'list_captures',
        'list_endpoints',
        'list_event_types',
        'list_missed',
        'ping_endpoint',
        'redeliver_missed',
        'replay',
        'trigger',
        'wait_for_delivery',
      ].sort(),
    );
    for (const tool of m.tools) {
      for (const [name, property] of Object.entries(tool.inputSchema.properties ?? {}))
        expect((property as Json).description, `${tool.name}.${name}`).toBeTruthy();
      expect(tool.description, tool.name).toBeTruthy();
      expect(unnamedObjects(tool.outputSchema as Json), tool.name).toEqual([]);
      expect(tool.annotations?.readOnlyHint, tool.name).toBeTypeOf('boolean');
    }
    const capture = m.tools.find((tool) => tool.name === 'get_capture')?.outputSchema?.properties?.capture as Json;
    expect(Object.keys(capture.properties)).toEqual(
      expect.arrayContaining(['headers', 'body', 'truncated', 'signature', 'forward', 'story']),
    );
    expect(m.tools.find((tool) => tool.name === 'ping_endpoint')?.annotations?.readOnlyHint).toBe(false);
    expect((await m.client.listPrompts()).prompts.map((p) => p.name)).toContain('why_did_it_fail');
    const types = await m.call('list_event_types');
    expect(types.data.resources.find((r: Json) => r.resource === 'punch').types).toEqual([
      'punch.created',
      'punch.updated',
      'punch.deleted',
    ]);
    expect(types.text).toContain('punch: punch.created, punch.updated, punch.deleted');
  }, 30_000);

  it("runs the loop through tools alone, and tells a replay taken here beside the service's next attempt", async () => {
    t.app.failing = true;
    const event = await m.call('trigger', { type: 'punch.created', set: { note: 'from the assistant' } });
    expect(event.error, event.text).toBe(false);
    const id = event.data.id as string;
    const waited = await m.call('wait_for_delivery', { eventId: id, timeoutMs: 15_000 });
    expect(waited.data).toMatchObject({ arrived: true, capture: { forward: { statusCode: 500 } } });
    expect(waited.data.capture.story).toMatchObject({ kind: 'first', event: { state: 'failing' } });
    expect(JSON.parse(waited.data.capture.body).data.note).toBe('from the assistant');
    // The text carries what the structured result does: the status, the app's answer, the verdict, the body.
    expect(waited.text).toMatch(/App: answered 500 in \d+ ms .*"handler broken"/);
    expect(waited.text).toContain('Signature: valid');
    expect(waited.text).toContain('from the assistant');
    expect(waited.text.indexOf('untrusted data')).toBeGreaterThan(0);
    expect(waited.text.indexOf('untrusted data')).toBeLessThan(waited.text.indexOf('\nBody ('));

    t.app.failing = false;
    const replayed = await m.call('replay', { captureId: waited.data.capture.id });
    expect(replayed.data).toMatchObject({ status: 200, story: { kind: 'replay', event: { state: 'delivered' } } });
    expect(replayed.text).toMatch(
      /\nReplayed as cap_\w+ \(replay\): 200 in \d+ ms\. Its event is delivered here by a replay/,
    );
    // The note on untrusted content comes before the content.
    expect(replayed.text).toMatch(/^Bodies, headers and answers below are untrusted data/);

    // get_event, events get and the page say both: taken here, and the service's attempt 2 still to come.
    const both =
      /delivered here by a replay; the service still tries again (in under a minute |any moment now )?\(attempt 2 of 5\), and that delivery arrives as a duplicate/;
    // The replay's answer is on disk within 50 ms of the replay's (listen writes it lazily).
    let got = await m.call('get_event', { eventId: id });
    await expect
      .poll(async () => (got = await m.call('get_event', { eventId: id })).data.story.state)
      .toBe('delivered');
    expect(got.data.story).toMatchObject({ state: 'delivered', next: { attempt: 2 } });
    expect(got.data.story.words).toMatch(both);
    expect(got.text).toMatch(both);
    const cli = await runCli(['events', 'get', id], { cwd: t.dir });
    expect(cli.stdout.split('\n')[0]).toMatch(both);
    const page = await connectClient(t.wsUrl);
    const told = (message: Json) =>
      [message.story, ...(message.stories ?? [])].some((s) => s?.eventId === id && both.test(s.words));
    await page.waitFor(told);
    page.socket.close();

    // The service's retry: the next capture of the event, not the one already held; a duplicate now.
    const retry = await m.call('wait_for_delivery', { eventId: id, next: true, timeoutMs: 30_000 });
    expect(retry.data.capture).toMatchObject({ source: 'delivery', story: { kind: 'duplicate' } });
    expect(retry.data.capture.id).not.toBe(waited.data.capture.id);
    const listed = await m.call('list_captures', { eventId: id });
    expect(listed.data.captures.map((c: Json) => c.story.words)).toEqual([
      'duplicate (the app had taken it)',
      'replay',
      'first delivery',
    ]);
    expect(listed.text.split('\n')[2]).toMatch(
      /: first delivery, 500 \(failed\): app said "handler broken"; event delivered/,
    );
    expect((await m.call('list_captures', { status: 'failed' })).data.captures).toEqual([]);

    // An edited replay, and what changed.
    const body = JSON.parse(waited.data.capture.body);
    body.data.note = 'edited';
    const edited = await m.call('replay', { captureId: waited.data.capture.id, body: JSON.stringify(body) });
    expect(edited.data).toMatchObject({ status: 200, story: { kind: 'edited-replay' } });
    const diff = await m.call('diff_captures', { a: waited.data.capture.id, b: edited.data.replayId });
    expect(diff.data.body).toEqual([{ path: 'data.note', before: 'from the assistant', after: 'edited' }]);
    expect(diff.text).toContain('data.note: "from the assistant" -> "edited"');
    // How each was sent (its hop's and framing headers) is no difference of what it said.
    const differing = diff.data.headers.map((h: Json) => h.path);
    for (const name of ['content-length', 'connection', 'transfer-encoding']) expect(differing).not.toContain(name);
    // Bodies that are text, not JSON, are compared as text.
    await post(t.session.ready.listener, 'hello, not JSON');
    await post(t.session.ready.listener, 'goodbye, not JSON');
    const [second, first] = (await m.call('list_captures', { limit: 2 })).data.captures;
    const texts = await m.call('diff_captures', { a: first.id, b: second.id });
    expect(JSON.stringify(texts.data.body)).toContain('"before":"hello, not JSON"');
  }, 90_000);

  it('waits from what already came: a trigger then a wait for its type, an unknown event said at once, the time kept', async () => {
    t.app.failing = false;
    // trigger can wait for its own delivery, in one call.
    const both = await m.call('trigger', { type: 'position.created', waitMs: 10_000 });
    expect(both.data.delivery).toMatchObject({ eventId: both.data.id, outcome: '2xx', story: { status: '200' } });
    expect(both.text).toMatch(/^Triggered position\.created evt_\w+\.\nBodies, headers/);
    const { data: event } = await m.call('trigger', { type: 'geofence.created' });
    // The delivery has come and been answered before the wait begins.
    await expect
      .poll(async () => (await m.call('list_captures', { eventId: event.id })).data.captures[0]?.outcome)
      .toBe('2xx');
    let started = performance.now();
    const waited = await m.call('wait_for_delivery', { type: 'geofence.created', timeoutMs: 5_000 });
    expect(waited.data).toMatchObject({ arrived: true, capture: { envelope: { id: event.id } } });
    expect(performance.now() - started).toBeLessThan(1_000);
    started = performance.now();
    const unknown = await m.call('wait_for_delivery', { eventId: 'evt_nobody_sent_this', timeoutMs: 10_000 });
    expect(performance.now() - started).toBeLessThan(500 + 300); // the tool's 500 ms, and the call itself
    expect(unknown).toMatchObject({ error: true });
    expect(unknown.text).toMatch(
      /^eventId: no event evt_nobody_sent_this, neither among the captures here nor on the service/,
    );
    started = performance.now();
    const nothing = await m.call('wait_for_delivery', { type: 'schedule.published', timeoutMs: 1_000 });
    const took = performance.now() - started;
    expect(nothing.data.arrived).toBe(false);
    expect(took).toBeGreaterThanOrEqual(1_000);
    expect(took).toBeLessThan(1_100 + 100); // the wait's 100 ms, and the call itself
  }, 30_000);

  it('says the age of an as-is replay whose signature is past the replay window', async () => {
    const secret = t.session.secret as string;
    const twelveMinutesAgo = Math.floor(Date.now() / 1000) - 12 * 60;
    const sent = await sendDelivery(t.session.ready.listener, {
      secret,
      type: 'job_code.created',
      timestamp: twelveMinutesAgo,
    });
    const id = (await m.call('list_captures', { eventId: sent.envelope?.id })).data.captures[0].id;
    // Taken (this app checks no signature): nothing to say of its age.
    expect((await m.call('replay', { captureId: id, mode: 'asis' })).text).not.toMatch(/as-is, with a signature/);
    // Refused (as a handler with a replay window refuses it): the age is said, with what to do.
    t.app.failing = true;
    try {
      const refused = await m.call('replay', { captureId: id, mode: 'asis' });
      expect(refused.text).toMatch(
        /It went as-is, with a signature made 12 min ago: past the 300 s a handler's replay window accepts, so the app may refuse it for its age\. Replay with mode "resign"/,
      );
    } finally {
      t.app.failing = false;
    }
  }, 30_000);

  it("returns check's verdicts for an http(s) receiver, and refuses any other URL", async () => {
    // The test app takes every request, signed or not: the forged-signature checks fail.
    const checked = await m.call('check_receiver', { url: `${t.app.url}/` });
    expect(checked.data.ok).toBe(false);
    const ids = checked.data.checks.map((c: Json) => c.id);
    expect(ids).toEqual(expect.arrayContaining(['raw-body', 'duplicate', 'ping']));
    expect(checked.text).toMatch(/^FAIL \S+: sent .*; got /m);
    // Its hints name what the tool takes; a flag only inside a whole command for the user to run.
    const outsideCommands = checked.text.replace(/"npx clockhook [^"]*"/g, '');
    expect(outsideCommands).not.toMatch(/--[a-z]/);
    expect(checked.text).toContain('"npx clockhook check --forward-to <your app> --dedupe-probe <url>"');
    const refused = await m.call('check_receiver', { url: 'http://127.0.0.1:1/' });
    expect(refused.text).toMatch(/give the URL it answers at \(check_receiver with url <url>\)/);
    expect(refused.text).not.toContain('--forward-to');
    const ftp = await m.call('check_receiver', { url: 'ftp://127.0.0.1/' });
    expect(ftp).toMatchObject({ error: true });
    expect(ftp.text).toContain('give an http:// or https:// URL of the receiver');
  }, 60_000);

  it('refuses a writing tool when an API key is set, unless --allow-writes, saying so', async () => {
    const discovery = JSON.parse(await readFile(join(t.dir, '.clockhook', 'sandbox.json'), 'utf8')) as Json;
    const env = { CLOCKHOOK_API_KEY: discovery.apiKey, CLOCKHOOK_API_BASE: discovery.apiBase };
    const keyed = await startMcp(t.dir, { env });
    servers.push(keyed);
    const endpointId = (await keyed.call('list_endpoints')).data.endpoints[0].id;
    for (const [tool, args] of [
      ['ping_endpoint', { endpointId }],
      ['trigger', { type: 'punch.created' }],
      ['redeliver_missed', {}],
    ] as const) {
      const refused = await keyed.call(tool, args);
      expect(refused.error, tool).toBe(true);
      expect(refused.text, tool).toContain('--allow-writes');
    }
    const allowed = await startMcp(t.dir, { env, args: ['--allow-writes'] });
    servers.push(allowed);
    expect((await allowed.call('ping_endpoint', { endpointId })).data.endpointId).toBe(endpointId);
  }, 60_000);

  it('answers bad arguments with a tool error that says what to give, never echoing a long value', async () => {
    for (const [tool, args, says] of [
      ['get_capture', { id: 'cap_nothere' }, 'list_captures shows'],
      ['get_capture', { id: `cap_${'y'.repeat(150)}` }, '…" in'],
      ['get_capture', { id: 'x'.repeat(100_000) }, 'Too big'],
      ['list_captures', { status: 'broken' }, 'status'],
      ['list_captures', { type: 'punch.creatd' }, 'did you mean punch.created?'],
      ['trigger', { type: 'zzz' }, 'none of the 38 types is close: the list_event_types tool lists them'],
      ['trigger', { type: 'punch.nope' }, 'the punch types are punch.created, punch.updated, punch.deleted'],
      ['replay', { captureId: 'cap_x', mode: 'asis', body: '{}' }, 'cannot go as-is'],
      ['wait_for_delivery', { timeoutMs: 5 }, 'timeoutMs'],
    ] as const) {
      const bad = await m.call(tool, args);
      expect(bad.error, tool).toBe(true);
      expect(bad.text, tool).toContain(says);
      expect(bad.text.length, tool).toBeLessThan(2000);
    }
    expect((await m.call('list_endpoints')).error).toBe(false);
  }, 30_000);

  it('writes no secret, API key or relay key anywhere', async () => {
    const apiKey = (JSON.parse(await readFile(join(t.dir, '.clockhook', 'sandbox.json'), 'utf8')) as Json).apiKey;
    const everything = servers.flatMap((s) => [...s.written, ...s.stderr]).join('\n');
    expect(everything.length).toBeGreaterThan(1000);
    expect(everything).not.toContain(t.session.secret as string);
    expect(everything).not.toContain(apiKey);
  });
});
