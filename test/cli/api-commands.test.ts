import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startReceiver } from '../helpers/receiver.js';
import { app, cli, dir, sandbox, useSandboxFolder } from './sandbox-folder.js';

useSandboxFolder();

describe('clockhook --help', () => {
  it('lists every command with one line each', async () => {
    const { code, stdout } = await cli('--help');
    expect(code).toBe(0);
    for (const command of ['listen', 'sandbox', 'relay', 'check', 'secret', 'trigger', 'endpoints', 'events'])
      expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });
});

// Each test runs the CLI ten times or more, one run after the other: a second or more each on two busy
// cores (one run of the suite beside a fresh-clone CI took 15 s for one of them).
describe('endpoints, events and trigger against the sandbox found in the folder', { timeout: 60_000 }, () => {
  it('creates, reads, updates, pings, disables, enables and deletes an endpoint', async () => {
    const created = await cli(
      'endpoints',
      'create',
      '--url',
      `${app.url}/hooks`,
      '--events',
      'punch.created,shift.published',
      '--json',
    );
    expect(created.code).toBe(0);
    const endpoint = JSON.parse(created.stdout);
    expect(endpoint).toMatchObject({ url: `${app.url}/hooks`, enabledEvents: ['punch.created', 'shift.published'] });
    expect(endpoint.secret).toMatch(/^whsec_/);

    const human = await cli('endpoints', 'get', String(endpoint.id));
    expect(human.stdout).toContain(`${app.url}/hooks`);
    expect(human.stdout).not.toContain(endpoint.secret);

    const updated = JSON.parse(
      (await cli('endpoints', 'update', String(endpoint.id), '--description', 'mine', '--json')).stdout,
    );
    expect(updated).toMatchObject({ description: 'mine', enabledEvents: ['punch.created', 'shift.published'] });
    expect(JSON.parse((await cli('endpoints', 'disable', String(endpoint.id), '--json')).stdout).status).toBe(
      'disabled',
    );
    expect((await cli('endpoints', 'get', String(endpoint.id))).stdout).toContain(
      `npx clockhook endpoints enable ${endpoint.id}`,
    );
    expect(JSON.parse((await cli('endpoints', 'enable', String(endpoint.id), '--json')).stdout).status).toBe('enabled');

    const ping = await cli('endpoints', 'ping', String(endpoint.id));
    expect(ping.stdout).toMatch(/Ping evt_\w+ queued/);
    await app.waitFor(1);
    expect(app.received[0].headers['x-service-event']).toBe('webhook_endpoint.ping');

    // The same shape as events list --json: the API's list page.
    const list = JSON.parse((await cli('endpoints', 'list', '--json')).stdout);
    expect(list).toMatchObject({ hasMore: false, nextCursor: null });
    expect(list.data.map((e: { id: number }) => e.id)).toContain(endpoint.id);
    expect((await cli('endpoints', 'delete', String(endpoint.id))).stdout).toContain(
      `Deleted webhook endpoint ${endpoint.id}`,
    );
  });

  it("deletes an endpoint listen registered together with its secret on file, and no other API's record", async () => {
    const { readFile, rm, writeFile } = await import('node:fs/promises');
    const created = JSON.parse((await cli('endpoints', 'create', '--url', `${app.url}/kept`, '--json')).stdout);
    const recordsPath = join(dir.path, '.clockhook', 'endpoints.json');
    // As listen files them: this folder's sandbox under the port asked for; the real service under its base.
    const onFile = (id: number, apiBase: string, url: string) => ({
      apiBase,
      url,
      id,
      secret: `whsec_${apiBase.length}_${id}`,
      createdAt: '2026-11-22T00:00:00.000Z',
    });
    const service = onFile(created.id, 'https://api.example.com', 'https://hooks.example.com/in');
    await writeFile(
      recordsPath,
      JSON.stringify([onFile(created.id, 'http://127.0.0.1:4302', `${app.url}/kept`), service]),
    );
    const deleted = await cli('endpoints', 'delete', String(created.id));
    expect(deleted.stdout).toBe(`Deleted webhook endpoint ${created.id}.\n`);
    expect(deleted.stderr).toBe(
      'Its secret, which clockhook listen kept, is no longer on file in .clockhook/endpoints.json.\n',
    );
    expect(JSON.parse(await readFile(recordsPath, 'utf8'))).toEqual([service]);
    // Nothing of listen's on file for it: nothing said.
    const other = JSON.parse((await cli('endpoints', 'create', '--url', `${app.url}/other`, '--json')).stdout);
    expect(await cli('endpoints', 'delete', String(other.id))).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(await readFile(recordsPath, 'utf8'))).toEqual([service]);
    await rm(recordsPath);
  });

  it('run from a subfolder of the project, says where the sandbox runs instead of only that this folder has none', async () => {
    const { mkdir } = await import('node:fs/promises');
    const sub = join(dir.path, 'src', 'hooks');
    await mkdir(sub, { recursive: true });
    const res = await runCli(['trigger', 'punch.created'], { cwd: sub });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `clockhook: no API key and no running sandbox in this folder (.clockhook/sandbox.json), but one runs for ${dir.path}: run this there (cd ../..), where listen or the sandbox was started, or pass --api-key and --api-base.\n`,
    );
  });

  it('names the list to look in when an id is not found', async () => {
    const endpoint = await cli('endpoints', 'get', '9999');
    expect(endpoint.code).toBe(1);
    expect(endpoint.stderr).toContain('404 invalid_request_error resource_not_found');
    expect(endpoint.stderr).toContain(
      'No endpoint with this id in this account: "npx clockhook endpoints list" shows the ids there are.',
    );
    const event = await cli('events', 'redeliver', 'evt_nope');
    expect(event.code).toBe(1);
    expect(event.stderr).toContain(
      'No event with this id in this account: "npx clockhook events list" shows the ids there are.',
    );
  });

  it('triggers an event that reaches the receiver, then shows and redelivers it', async () => {
    const endpoint = JSON.parse((await cli('endpoints', 'create', '--url', `${app.url}/t`, '--json')).stdout);
    const before = app.received.length;
    const triggered = await cli('trigger', 'time_card.approved', '--json');
    expect(triggered.code).toBe(0);
    const event = JSON.parse(triggered.stdout);
    expect(event).toMatchObject({ type: 'time_card.approved', data: { status: 'approved' } });
    await app.waitFor(before + 1);

    const shown = await cli('events', 'get', event.id);
    expect(shown.stdout).toMatch(/#\s+ENDPOINT\s+STATUS/);
    expect(shown.stdout).toMatch(new RegExp(`1\\s+${endpoint.id}\\s+200\\s+\\d+ ms\\s+\\S+\\s+\\{"ok":true\\}\\n`));
    const listed = await cli('events', 'list', '--type', 'time_card.approved');
    expect(listed.stdout).toContain(event.id);
    const redelivered = JSON.parse((await cli('events', 'redeliver', event.id, '--json')).stdout);
    expect(redelivered).toMatchObject({ eventId: event.id, endpointsNotified: 1 });
    await app.waitFor(before + 2);
    expect(JSON.parse(app.received.at(-1)?.body.toString() ?? '').id).toBe(event.id);
    // The redelivery's attempt is the event's second, though the first of its own delivery.
    await expect
      .poll(async () => (await cli('events', 'get', event.id)).stdout)
      .toMatch(new RegExp(`\\n2\\s+${endpoint.id}\\s+200`));
    await cli('endpoints', 'delete', String(endpoint.id));
  });

  it('triggers a burst with --count and --concurrency, each event reaching the receiver', async () => {
    const endpoint = JSON.parse((await cli('endpoints', 'create', '--url', `${app.url}/burst`, '--json')).stdout);
    const before = app.received.length;
    const burst = await cli('trigger', 'shift.deleted', '--count', '6', '--concurrency', '3', '--json');
    expect(burst.code, burst.stderr).toBe(0);
    const ids = burst.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).id as string);
    expect(new Set(ids).size).toBe(6);
    await app.waitFor(before + 6);
    const arrived = app.received.slice(before).map((r) => JSON.parse(r.body.toString()).id as string);
    expect(arrived.sort()).toEqual([...ids].sort());
    expect((await cli('trigger', 'shift.deleted', '--count', '0')).code).toBe(2);
    await cli('endpoints', 'delete', String(endpoint.id));
  });

  it('lists more events than a page holds, read 100 at a time, and says where the next page starts', async () => {
    const emit = () =>
      fetch(`${sandbox.apiBase}/sandbox/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sandbox.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'geofence.deleted' }),
      }).then((response) => response.json() as Promise<{ id: string }>);
    const emitted: string[] = [];
    for (let i = 0; i < 104; i++) emitted.push((await emit()).id);
    const newestFirst = emitted.reverse();
    const listed = await cli('events', 'list', '--type', 'geofence.deleted', '--limit', '103', '--json');
    expect(listed.code).toBe(0);
    const page = JSON.parse(listed.stdout);
    expect(page.data.map((e: { id: string }) => e.id)).toEqual(newestFirst.slice(0, 103));
    expect(page).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const table = await cli('events', 'list', '--type', 'geofence.deleted', '--limit', '200');
    expect(table.stdout.split('\n').filter((line) => line.includes('geofence.deleted'))).toHaveLength(104);
    expect(table.stdout).not.toContain('More: --cursor');
    const rest = JSON.parse(
      (await cli('events', 'list', '--type', 'geofence.deleted', '--cursor', page.nextCursor, '--json')).stdout,
    );
    expect(rest).toMatchObject({
      data: [expect.objectContaining({ id: newestFirst[103] })],
      hasMore: false,
      nextCursor: null,
    });
  });

  it('shows what the receiver answered to each attempt, its error message when it refused, and when the service tries again', async () => {
    const refusing = await startReceiver((_r, res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"error":{"message":"No signatures found matching the expected signature"}}'),
    );
    try {
      const endpoint = JSON.parse(
        (await cli('endpoints', 'create', '--url', `${refusing.url}/r`, '--events', 'pay_period.reopened', '--json'))
          .stdout,
      );
      const event = JSON.parse((await cli('trigger', 'pay_period.reopened', '--json')).stdout);
      await expect
        .poll(async () => (await cli('events', 'get', event.id)).stdout)
        .toMatch(
          new RegExp(
            `1\\s+${endpoint.id}\\s+400\\s+\\d+ ms\\s+\\S+\\s+No signatures found matching the expected signature\\n`,
          ),
        );
      // When the service tries again, by the contract's retry table, and how not to wait for it.
      const [attempt] = JSON.parse((await cli('events', 'get', event.id, '--json')).stdout).delivery_attempts;
      const due = new Date(Date.parse(attempt.createdAt) + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const shown = (await cli('events', 'get', event.id)).stdout;
      expect(shown).toContain(
        `\nEndpoint ${endpoint.id}: attempt 2 of 5 is due at about ${due}, 1 min after attempt 1 (the service's retry policy).\n`,
      );
      expect(shown).toContain(
        `To send the event again now, to every endpoint subscribed to it (retries already scheduled still come): npx clockhook events redeliver ${event.id}\n`,
      );
      // A disabled endpoint gets no more attempts, a deleted one nothing at all: then no time is promised.
      await cli('endpoints', 'disable', String(endpoint.id));
      const disabled = (await cli('events', 'get', event.id)).stdout;
      expect(disabled).toContain(
        `\nEndpoint ${endpoint.id} is disabled, and a disabled endpoint is excluded from deliveries: no more attempts come while it is. "npx clockhook endpoints enable ${endpoint.id}" enables it.\n`,
      );
      expect(disabled).not.toContain('is due');
      await cli('endpoints', 'delete', String(endpoint.id));
      expect((await cli('events', 'get', event.id)).stdout).toContain(
        `\nEndpoint ${endpoint.id} no longer exists: nothing more is sent to it.\n`,
      );
    } finally {
      await refusing.close();
    }
    // Ten CLI runs and the sandbox's delivery: seconds each on a busy machine.
  }, 60_000);

  it('sends --data as the envelope data', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir.path, 'data.json'), '{"id": 42, "firstName": "Grace"}');
    const event = JSON.parse((await cli('trigger', 'employee.created', '--data', 'data.json', '--json')).stdout);
    expect(event.data).toEqual({ id: 42, firstName: 'Grace' });
    await writeFile(join(dir.path, 'bad.json'), '[1]');
    const bad = await cli('trigger', 'employee.created', '--data', 'bad.json');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must hold a JSON object');
    const missing = await cli('trigger', 'employee.created', '--data', 'missing.json');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      'clockhook: cannot read --data missing.json: no such file. Pass a JSON file holding the data object.\n',
    );
    await writeFile(join(dir.path, 'empty.json'), '\n');
    const empty = await cli('trigger', 'employee.created', '--data', 'empty.json');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(
      'clockhook: --data empty.json is empty. Pass a JSON file holding the data object, such as {"id": 42}.\n',
    );
    // - is standard input.
    const piped = await runCli(['trigger', 'employee.created', '--data', '-', '--json'], {
      cwd: dir.path,
      input: '{"id": 7, "firstName": "Ada"}',
    });
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout).data).toEqual({ id: 7, firstName: 'Ada' });
    const pipedBad = await runCli(['trigger', 'employee.created', '--data', '-'], {
      cwd: dir.path,
      input: '{"id": 7,',
    });
    expect(pipedBad.code).toBe(2);
    expect(pipedBad.stderr).toMatch(/^clockhook: --data - \(standard input\) is not valid JSON \(.+\)\.\n$/);
    // A value that begins with { is the JSON itself, as curl's -d takes it.
    const inline = await cli('trigger', 'employee.created', '--data', '{"id": 9, "firstName": "Lin"}', '--json');
    expect(JSON.parse(inline.stdout).data).toEqual({ id: 9, firstName: 'Lin' });
    const inlineBad = await cli('trigger', 'employee.created', '--data', '{"id": 9');
    expect(inlineBad.code).toBe(2);
    expect(inlineBad.stderr).toMatch(/^clockhook: --data \(the JSON given\) is not valid JSON \(.+\)\.\n$/);
  });

  it('prints type, code, message, field errors and requestId of an API error, exit 1', async () => {
    const long = 'd'.repeat(501);
    const res = await cli('endpoints', 'create', '--url', 'http://example.com/h', '--description', long);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('400 invalid_request_error parameter_invalid');
    expect(res.stderr).toContain('- url must be an HTTPS URL');
    expect(res.stderr).toContain('- description must be at most');
    // The sandbox's message joins the field errors; each is said once, not in the message and again below it.
    expect(res.stderr.match(/description must be at most/g)).toHaveLength(1);
    // A type the CLI can check is refused before the API is asked, with no HTTP line.
    const unknown = await cli('endpoints', 'create', '--url', `${app.url}/u`, '--events', 'punch.exploded');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^clockhook: --events: unknown event type "punch\.exploded" \(the punch types are punch\.created, punch\.updated, punch\.deleted\)\.\n$/,
    );
    expect(res.stderr).toMatch(/requestId: req_/);
  });

  it('takes an empty --description as clearing it', async () => {
    const created = JSON.parse(
      (await cli('endpoints', 'create', '--url', `${app.url}/d`, '--description', 'label', '--json')).stdout,
    );
    const cleared = await cli('endpoints', 'update', String(created.id), '--description', '', '--json');
    expect(cleared.code).toBe(0);
    expect(JSON.parse(cleared.stdout).description).toBe('');
  });

  it('exits 2 on bad usage', async () => {
    expect((await cli('trigger', 'punch.exploded')).code).toBe(2);
    // An unset shell variable (`--api-key "$KEY"`) must not quietly mean the sandbox.
    const empty = await cli('endpoints', 'list', '--api-key', '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(
      'clockhook: --api-key was given an empty value (an unset shell variable?): give it a value, or leave the flag out.\n',
    );
    const typo = await cli('trigger', 'employe.created');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown event type "employe.created" (did you mean employee.created?)');
    const ping = await cli('trigger', 'webhook_endpoint.ping');
    expect(ping.code).toBe(2);
    expect(ping.stderr).toContain('npx clockhook endpoints ping <id>');
    expect((await cli('endpoints', 'get', 'abc')).code).toBe(2);
    expect((await cli('endpoints', 'create')).code).toBe(2);
    expect((await cli('events', 'list', '--limit', 'lots')).code).toBe(2);
    // commander's own usage errors begin as clockhook's others do.
    expect(await cli('frobnicate')).toMatchObject({
      code: 2,
      stderr: "clockhook: unknown command 'frobnicate'\n(run with --help for usage)\n",
    });
    expect(await cli('trigger')).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^clockhook: missing required argument 'event-type'\n/),
    });
    const base = await runCli(['endpoints', 'list', '--api-key', 'tt_live_x'], {
      cwd: dir.path,
      env: { CLOCKHOOK_API_BASE: 'api.example.com' },
    });
    expect(base).toMatchObject({
      code: 2,
      stderr: `clockhook: CLOCKHOOK_API_BASE "api.example.com" is not a URL: give the service's API base URL, e.g. https://api.example.com.\n`,
    });
    const scheme = await cli('endpoints', 'list', '--api-key', 'tt_live_x', '--api-base', 'ftp://api.example.com');
    expect(scheme).toMatchObject({
      code: 2,
      stderr: `clockhook: --api-base "ftp://api.example.com" is not an http(s) URL: give the service's API base URL, e.g. https://api.example.com.\n`,
    });
    const blocked = await cli('endpoints', 'list', '--api-key', 'tt_live_x', '--api-base', 'http://127.0.0.1:6000');
    expect(blocked).toMatchObject({
      code: 2,
      stderr: `clockhook: --api-base "http://127.0.0.1:6000" is on port 6000, which fetch refuses to connect to (the Fetch standard blocks it, with 9, 6667 and others): give the service's API base URL, e.g. https://api.example.com.\n`,
    });
  });
});
