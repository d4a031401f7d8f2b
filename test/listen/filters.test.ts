// listen --filter: deliveries outside the rules are verified, captured and answered 200, never forwarded, and told
// as filtered (with the rule that took them out) by listen's line, captures list, the page's messages and MCP. One
// listen (offline, a known secret) and one app for the file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFilter } from '../../src/listener/filters.js';
import { verdictOf } from '../../src/shared/verdict.js';
import { runCli, type SpawnedCli, spawnCli, urlOnLine } from '../helpers/cli.js';
import { envelopeBody, SECRET } from '../helpers/delivery.js';
import { connectClient } from '../helpers/inspector.js';
import { postSigned } from '../helpers/listen.js';
import { type McpUnderTest, startMcp } from '../helpers/mcp.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';

type Json = Record<string, any>;
let dir: Awaited<ReturnType<typeof tempDir>>;
let app: Receiver;
let listen: SpawnedCli;
let listener: string;
let inspector: string;
const cli = (...args: string[]) => runCli(args, { cwd: dir.path });
const send = (id: string, type: string, data: Json) =>
  postSigned(listener, envelopeBody(id, { type, data }), SECRET, { 'content-type': 'application/json' });

beforeAll(async () => {
  dir = await tempDir();
  app = await startReceiver();
  listen = spawnCli(
    [
      ...['listen', '--secret', SECRET, '--port', '0', '--inspector-port', '0', '--no-open'],
      ...['--forward-to', app.url, '--filter', 'type=punch.*', '--filter', 'data.object.employee_id=42'],
    ],
    { cwd: dir.path },
  );
  listener = await urlOnLine(listen, /Listening/);
  inspector = await urlOnLine(listen, /Inspector/);
  for (const [id, type, employee] of [
    ['evt_kept', 'punch.created', 42],
    ['evt_other_employee', 'punch.created', 7],
    ['evt_other_type', 'employee.created', 42],
  ] as const)
    expect((await send(id, type, { object: { employee_id: employee } })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await listen?.stop();
  await app?.close();
  await dir?.remove();
});

describe('listen --filter', () => {
  it('forwards only what matches every rule; the rest is captured, answered 200 and told as filtered', async () => {
    expect(app.received.map((r) => JSON.parse(r.body.toString()).id)).toEqual(['evt_kept']);
    const lineOf = (id: string) => listen.lines.map((l) => l.text ?? '').find((l) => l.includes(`[${id}]`)) ?? '';
    await expect.poll(() => lineOf('evt_other_type')).toContain('[filtered]');
    expect(lineOf('evt_other_type')).toContain('"taken out by --filter type=punch.*"');
    expect(lineOf('evt_other_employee')).toContain('"taken out by --filter data.object.employee_id=42"');
    expect(lineOf('evt_kept')).toContain('[200]');
    // captures list, and --filtered for those alone.
    const listed = (await cli('captures', 'list')).stdout;
    expect(listed).toMatch(/\[evt_other_type\].*\[filtered\].*taken out by --filter type=punch\.\*/);
    const filtered = (await cli('captures', 'list', '--filtered', '--json')).stdout.trim().split('\n');
    expect(filtered.map((l) => JSON.parse(l).envelope.id).sort()).toEqual(['evt_other_employee', 'evt_other_type']);
    expect(JSON.parse(filtered[0]).story).toMatchObject({ status: 'filtered', outcome: '2xx', tone: 'plain' });
  });

  it('tells the page and MCP the same, and a replay of a filtered capture goes to the app as asked', async () => {
    const page = await connectClient(`${inspector.replace('http', 'ws').replace(/\/\?/, '/ws?')}`);
    try {
      // The page judges each capture with the same verdict (served to it as /shared/verdict.js).
      const snapshot = await page.waitFor((m) => m.type === 'snapshot');
      const shown = snapshot.captures.find((c: Json) => c.envelope?.id === 'evt_other_type');
      expect(shown).toMatchObject({ filtered: 'type=punch.*', forward: null });
      expect(verdictOf(shown)).toMatchObject({ status: 'filtered', outcome: '2xx', tone: 'plain' });
    } finally {
      page.socket.close();
    }
    const mcp: McpUnderTest = await startMcp(dir.path);
    try {
      const listed = await mcp.call('list_captures', { eventId: 'evt_other_type' });
      expect(listed.data.captures[0].story).toMatchObject({
        status: 'filtered',
        answer: 'taken out by --filter type=punch.*',
      });
      const replayed = await mcp.call('replay', { captureId: listed.data.captures[0].id });
      expect(replayed.data).toMatchObject({ status: 200 });
    } finally {
      await mcp.close();
    }
    expect(app.received.map((r) => JSON.parse(r.body.toString()).id)).toContain('evt_other_type');
  }, 30_000);

  it('refuses a rule it cannot read, saying what a rule is', async () => {
    expect(() => parseFilter('data.x!')).toThrow(/not a rule\. A rule is a path with what it must be, e\.g\./);
    expect(() => parseFilter('data.x~=(')).toThrow(/Invalid regular expression/);
    const res = await cli('listen', '--filter', '=x', '--port', '0');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--filter "=x": not a rule');
  });
});

describe('a filter rule', () => {
  const facts = (json: unknown, headers: Json = {}, url = '/') => ({ json, headers, url });
  it.each([
    ['type=punch.*', { type: 'punch.created' }, true],
    ['type=punch.*', { type: 'employee.created' }, false],
    ['data.items[1].id=b', { data: { items: [{ id: 'a' }, { id: 'b' }] } }, true],
    ['data.note', { data: { note: null } }, true],
    ['!data.note', { data: {} }, true],
    ['data.n!=42', { data: { n: 42 } }, false],
    ['data.n!=42', { data: {} }, true],
    ['data.email~=@acme\\.com$', { data: { email: 'z@acme.com' } }, true],
    ['data.flag=true', { data: { flag: true } }, true],
  ])('%s on %j: %s', (rule, json, takes) => {
    expect(parseFilter(rule).takes(facts(json))).toBe(takes);
  });
  it('reads headers and the query', () => {
    expect(parseFilter('header.X-Tenant=acme').takes(facts({}, { 'x-tenant': 'acme' }))).toBe(true);
    expect(parseFilter('query.env=prod').takes(facts({}, {}, '/hooks?env=prod'))).toBe(true);
    expect(parseFilter('query.env=prod').takes(facts({}, {}, '/hooks?env=test'))).toBe(false);
  });
});
