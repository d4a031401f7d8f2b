import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListenSession } from '../../src/listen/index.js';
import { BIN, cleanEnv } from '../helpers/cli.js';
import { startInspectedSession } from '../helpers/inspector.js';
import type { FixableApp } from '../helpers/receiver.js';

// A real `clockhook mcp` over stdio, driven by the SDK's own client, beside a real listen (with its embedded
// sandbox) and an app on port 0 that fails until it is fixed.
type Json = Record<string, any>;
let t: Awaited<ReturnType<typeof startInspectedSession>>;
let app: FixableApp;
let session: ListenSession;
const servers: { client: Client; stderr: string[] }[] = [];
/** Every byte the servers wrote that a test read: results and errors (stdout), and their stderr. */
const written: string[] = [];

async function mcp(env: Record<string, string> = {}, args: string[] = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    cwd: t.dir,
    env: cleanEnv(env) as Record<string, string>,
    stderr: 'pipe',
  });
  const stderr: string[] = [];
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(String(chunk)));
  const client = new Client({ name: 'clockhook-test', version: '1.0.0' });
  await client.connect(transport);
  servers.push({ client, stderr });
  return client;
}

/** Calls a tool, keeping what came back; the result's structured content, and whether it is an error. */
async function call(client: Client, name: string, args: Json = {}) {
  const res = (await client.callTool({ name, arguments: args })) as Json;
  written.push(JSON.stringify(res));
  return { data: res.structuredContent as Json, text: res.content?.[0]?.text as string, error: Boolean(res.isError) };
}

beforeAll(async () => {
  t = await startInspectedSession();
  ({ app, session } = t);
}, 60_000);

afterAll(async () => {
  for (const { client } of servers) await client.close();
  await t?.close();
});

describe('clockhook mcp', () => {
  it('lists its tools, each with a schema for its input and its result, and a prompt', async () => {
    const client = await mcp();
    const { tools } = await client.listTools();
    written.push(JSON.stringify(tools));
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'check_receiver',
        'diff_captures',
        'get_capture',
        'get_event',
        'list_captures',
        'list_endpoints',
        'list_missed',
        'ping_endpoint',
        'redeliver_missed',
        'replay',
        'trigger',
        'wait_for_delivery',
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.annotations?.readOnlyHint, tool.name).toBeTypeOf('boolean');
    }
    expect(tools.find((t) => t.name === 'list_captures')?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === 'ping_endpoint')?.annotations?.readOnlyHint).toBe(false);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('why_did_it_fail');
  }, 30_000);

  it('runs the loop through tools alone: trigger, see the 500, fix, replay a 2xx, see it delivered', async () => {
    const client = servers[0].client;
    app.failing = true;
    const event = await call(client, 'trigger', { type: 'punch.created', set: { note: 'from the assistant' } });
    expect(event.error, event.text).toBe(false);
    const waited = await call(client, 'wait_for_delivery', { eventId: event.data.id, timeoutMs: 15_000 });
    expect(waited.data).toMatchObject({ arrived: true, capture: { forward: { statusCode: 500 } } });
    expect(waited.data.capture.story).toMatchObject({ kind: 'first', event: { state: 'failing' } });
    expect(JSON.parse(waited.data.capture.body).data.note).toBe('from the assistant');
    expect(waited.data.untrusted).toMatch(/untrusted data/);
    expect(waited.text).toMatch(/untrusted data/);

    app.failing = false;
    const replayed = await call(client, 'replay', { captureId: waited.data.capture.id });
    expect(replayed.data).toMatchObject({ status: 200, capture: { story: { kind: 'replay' } } });
    const listed = await call(client, 'list_captures', { limit: 5 });
    const newest = listed.data.captures.find((c: Json) => c.eventId === event.data.id);
    expect(newest.story).toMatchObject({ kind: 'replay', event: { state: 'delivered', failed: false } });
    expect((await call(client, 'list_captures', { status: 'failed' })).data.captures).toEqual([]);

    // An edited replay, and what changed.
    const body = JSON.parse(waited.data.capture.body);
    body.data.note = 'edited';
    const edited = await call(client, 'replay', { captureId: waited.data.capture.id, body: JSON.stringify(body) });
    expect(edited.data).toMatchObject({ status: 200, capture: { story: { kind: 'edited-replay' } } });
    const diff = await call(client, 'diff_captures', { a: waited.data.capture.id, b: edited.data.replayId });
    expect(diff.data.body).toEqual([{ path: 'data.note', before: 'from the assistant', after: 'edited' }]);
    const got = await call(client, 'get_event', { eventId: event.data.id });
    expect(got.data.event.delivery_attempts.length).toBeGreaterThanOrEqual(1);
    expect(got.data.story.state).toBe('delivered');
  }, 60_000);

  it("returns check's verdicts for a receiver", async () => {
    // The test app takes every request, signed or not: the forged-signature checks fail.
    const checked = await call(servers[0].client, 'check_receiver', { url: `${app.url}/` });
    expect(checked.data.ok).toBe(false);
    const ids = checked.data.checks.map((c: Json) => c.id);
    expect(ids).toEqual(expect.arrayContaining(['raw-body', 'duplicate', 'ping']));
    expect(checked.data.checks.some((c: Json) => c.status === 'fail')).toBe(true);
  }, 60_000);

  it('refuses a writing tool when an API key is set, unless --allow-writes, saying so', async () => {
    const discovery = JSON.parse(await readFile(join(t.dir, '.clockhook', 'sandbox.json'), 'utf8')) as Json;
    const env = { CLOCKHOOK_API_KEY: discovery.apiKey, CLOCKHOOK_API_BASE: discovery.apiBase };
    const keyed = await mcp(env);
    const endpointId = (await call(keyed, 'list_endpoints')).data.endpoints[0].id;
    for (const [tool, args] of [
      ['ping_endpoint', { endpointId }],
      ['trigger', { type: 'punch.created' }],
      ['redeliver_missed', {}],
    ] as const) {
      const refused = await call(keyed, tool, args);
      expect(refused.error, tool).toBe(true);
      expect(refused.text, tool).toContain('--allow-writes');
    }
    const allowed = await mcp(env, ['--allow-writes']);
    expect((await call(allowed, 'ping_endpoint', { endpointId })).data.endpointId).toBe(endpointId);
  }, 60_000);

  it('answers bad arguments with a tool error that says what to give, and goes on answering', async () => {
    const client = servers[0].client;
    for (const [tool, args, says] of [
      ['get_capture', { id: 'cap_nothere' }, 'list_captures shows'],
      ['list_captures', { status: 'broken' }, 'status'],
      ['list_captures', { type: 'punch.creatd' }, 'did you mean punch.created?'],
      ['trigger', { type: 'zzz' }, 'none of the 38 types is close: the list_event_types tool lists them'],
      ['trigger', { type: 'punch.nope' }, 'the punch types are punch.created, punch.updated, punch.deleted'],
      ['replay', { captureId: 'cap_x', mode: 'asis', body: '{}' }, 'cannot go as-is'],
      ['wait_for_delivery', { timeoutMs: 5 }, 'timeoutMs'],
    ] as const) {
      const bad = await call(client, tool, args);
      expect(bad.error, tool).toBe(true);
      expect(bad.text, tool).toContain(says);
    }
    expect((await call(client, 'list_endpoints')).error).toBe(false);
  }, 30_000);

  it('writes no secret, API key or relay key anywhere', () => {
    const discovery = readFile(join(t.dir, '.clockhook', 'sandbox.json'), 'utf8');
    return discovery.then((text) => {
      const apiKey = (JSON.parse(text) as Json).apiKey as string;
      const everything = [...written, ...servers.flatMap((s) => s.stderr)].join('\n');
      expect(everything.length).toBeGreaterThan(1000);
      expect(everything).not.toContain(session.secret as string);
      expect(everything).not.toContain(apiKey);
    });
  });
});
