// listen with an API key, its bad usage, and a kill -9 during a burst.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../helpers/cli.js';
import { postSigned, readCaptures, readEndpointRecords } from '../helpers/listen.js';
import { envelopeBody } from '../helpers/delivery.js';
import { dir, folderSandbox, listen, procs, useListenFolder } from './folder-rig.js';

useListenFolder();

/** listen's flags for the folder's sandbox as the real API, with a tunnel's public URL. */
const apiFlags = (sandbox: { apiKey: string; apiBase: string }, publicUrl: string) => [
  '--api-key',
  sandbox.apiKey,
  '--api-base',
  sandbox.apiBase,
  '--public-url',
  publicUrl,
];

describe('listen with an API key', () => {
  it('registers --public-url, masks the secret for people, deletes the endpoint on exit', async () => {
    const { sandbox, client } = await folderSandbox();
    const proc = spawnCli(
      ['listen', '--port', '0', ...apiFlags(sandbox, 'https://tunnel.example.com/h'), '--events', 'punch.created'],
      { cwd: dir.path },
    );
    procs.push(proc);
    const secretLine = await proc.waitForLine((l) => typeof l.text === 'string' && l.text.includes('Secret'));
    const [record] = await readEndpointRecords(dir.path);
    expect(secretLine.text).toContain(`whsec_…${record.secret.slice(-4)}`);
    expect(proc.lines.map((l) => l.text).join('\n')).not.toContain(record.secret);
    expect(proc.stderr).not.toContain(record.secret);
    const endpoints = (await client.listEndpoints()).data;
    expect(endpoints).toEqual([
      expect.objectContaining({ id: record.id, url: 'https://tunnel.example.com/h', enabledEvents: ['punch.created'] }),
    ]);
    expect(await proc.stop('SIGTERM')).toBe(0);
    expect((await client.listEndpoints()).data).toEqual([]);
  });

  it('prints the ready line with publicUrl, and the secret only with --print-secret', async () => {
    const { sandbox } = await folderSandbox();
    const args = apiFlags(sandbox, 'https://t.example.com/h');
    const masked = await listen(...args);
    expect(masked.ready).toMatchObject({
      publicUrl: 'https://t.example.com/h',
      sandbox: false,
      apiBase: sandbox.apiBase,
    });
    expect(masked.ready.secret).toBeUndefined();
    await masked.stop('SIGTERM');
    const shown = await listen(...args, '--print-secret');
    expect(shown.ready.secret).toMatch(/^whsec_/);
  });

  it('warns when --public-url is outside --path, where every delivery through a tunnel would get 404', async () => {
    const { sandbox } = await folderSandbox();
    const args = ['--api-key', sandbox.apiKey, '--api-base', sandbox.apiBase, '--path', '/hooks'];
    const outside = await listen(...args, '--public-url', 'https://t.example.com');
    await expect
      .poll(() => outside.stderr)
      .toContain(
        '--public-url https://t.example.com is outside --path /hooks: through a tunnel that passes paths as they are, every delivery arrives at / and gets 404. Register a URL under the path instead, such as --public-url https://t.example.com/hooks',
      );
    await outside.stop('SIGTERM');
    const under = await listen(...args, '--public-url', 'https://t.example.com/hooks');
    expect(under.stderr).not.toContain('is outside --path');
  });

  it("an endpoint's description says what becomes of it, and follows the run that reuses it", async () => {
    const { sandbox, client } = await folderSandbox();
    const args = apiFlags(sandbox, 'https://t.example.com/k');
    const keeping = await listen(...args, '--keep-endpoint');
    expect(await keeping.stop('SIGTERM')).toBe(0);
    expect(await client.getEndpoint(keeping.ready.endpointId)).toMatchObject({
      description: 'clockhook listen (created automatically; kept for its next run)',
    });

    const deleting = await listen(...args);
    expect(deleting.ready.endpointId).toBe(keeping.ready.endpointId);
    expect(await client.getEndpoint(deleting.ready.endpointId)).toMatchObject({
      description: 'clockhook listen (created automatically; deleted when it exits)',
    });
    expect(await deleting.stop('SIGTERM')).toBe(0);
    expect((await client.listEndpoints()).data).toEqual([]);
  });

  it('reuses its kept endpoint, secret and all, whichever way the same --api-base is spelled', async () => {
    const { sandbox } = await folderSandbox();
    const args = (base: string) => [
      '--api-key',
      sandbox.apiKey,
      '--api-base',
      base,
      '--public-url',
      'https://t.example.com/spelled',
      '--keep-endpoint',
      '--print-secret',
    ];
    const first = await listen(...args(`${sandbox.apiBase}/`));
    expect(await first.stop('SIGTERM')).toBe(0);
    const second = await listen(...args(sandbox.apiBase));
    expect(second.ready).toMatchObject({ endpointId: first.ready.endpointId, secret: first.ready.secret });
    expect(second.stderr).not.toContain('Deleting endpoint');
    expect(await second.stop('SIGTERM')).toBe(0);
    const records = await readEndpointRecords(dir.path);
    expect(records).toEqual([expect.objectContaining({ apiBase: sandbox.apiBase, id: first.ready.endpointId })]);
  });

  it('exits 1 with a clear message when the key is refused', async () => {
    const { sandbox } = await folderSandbox();
    const res = await runCli(
      [
        'listen',
        '--port',
        '0',
        '--api-key',
        'tt_live_wrong',
        '--api-base',
        sandbox.apiBase,
        '--public-url',
        'https://t.example.com/h',
      ],
      { cwd: dir.path },
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('401 api_key_invalid');
  });

  it('exits 2 on bad usage', async () => {
    for (const args of [
      ['--api-key', 'tt_live_x'],
      ['--endpoint', '3'],
      ['--forward-to', 'ftp://x'],
      ['--tolerance', '-1'],
      ['--max-captures', '0'],
      ['--max-buffer', 'lots'],
      ['--path', '?x'],
      ['--api-key', 'tt_live_x', '--api-base', 'ftp://api.example.com'],
      ['--relay', 'nope'],
      ['--relay', 'ftp://relay.test'],
      ['--relay', 'https://relay.test/hooks'],
      ['--relay', 'https://relay.test/?a'],
      ['--public-url', 'abc123.ngrok.app', '--api-key', 'tt_live_x', '--api-base', 'http://127.0.0.1:8'],
      ['--inspector-port', '6000'],
      ['--sandbox-port', '6667'],
      ['--time-scale', '0'],
      ['--time-scale', 'fast'],
      ['--time-scale', '0.01', '--api-key', 'tt_live_x', '--api-base', 'https://api.example.com'],
    ]) {
      const res = await runCli(['listen', '--port', '0', ...args], { cwd: dir.path });
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr, args.join(' ')).toMatch(/^clockhook: /);
    }
    // The sandbox would refuse the endpoint after everything had started: said at once instead.
    const typo = await runCli(['listen', '--port', '0', '--events', 'punch.creatd'], { cwd: dir.path });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /^clockhook: --events: unknown event type "punch\.creatd" \(did you mean punch\.created\?\)/,
    );
    const small = await runCli(['listen', '--port', '0', '--max-buffer', '1mb'], { cwd: dir.path });
    expect(small.code).toBe(2);
    expect(small.stderr).toContain(
      '--max-buffer must be at least 5mb, the largest body a delivery may have (got 1mb).',
    );
    // A browser would not open the page there (ERR_UNSAFE_PORT), nor fetch reach a sandbox.
    const unsafe = await runCli(['listen', '--port', '0', '--inspector-port', '6000'], { cwd: dir.path });
    expect(unsafe).toMatchObject({
      code: 2,
      stderr:
        'clockhook: --inspector-port 6000: a browser cannot reach that port (the Fetch standard blocks it, with 9, 6667 and others); pick another --inspector-port.\n',
    });
    // A --db that is not a store is left as it is, with exit 2 and what to give instead.
    await writeFile(join(dir.path, 'package.json'), '{"name":"my-app"}');
    const foreign = await runCli(
      ['listen', '--port', '0', '--sandbox-port', '0', '--inspector-port', '0', '--db', 'package.json'],
      { cwd: dir.path },
    );
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toBe(
      'clockhook: package.json is not a clockhook capture store: it does not begin as clockhook writes one, so it is left as it is. Give --db a file clockhook made, or a path where no file is yet.\n',
    );
    expect(await readFile(join(dir.path, 'package.json'), 'utf8')).toBe('{"name":"my-app"}');
    const folder = await runCli(
      ['listen', '--port', '0', '--sandbox-port', '0', '--inspector-port', '0', '--db', '.'],
      { cwd: dir.path },
    );
    expect(folder.code).toBe(2);
    expect(folder.stderr).toBe('clockhook: . is a folder, not a file. Give --db a file path, such as captures.json.\n');
    // Nineteen CLI starts, one after the other: a few seconds each on a busy two-core machine.
  }, 90_000);

  it('never writes the API key to the capture file', async () => {
    const { sandbox } = await folderSandbox();
    const proc = await listen('--api-key', sandbox.apiKey, '--api-base', sandbox.apiBase, '--secret', 'whsec_k');
    const body = '{"id":"evt_k"}';
    await postSigned(proc.ready.listener, body, 'whsec_k');
    await proc.waitForLine((l) => l.event === 'delivery');
    await proc.stop('SIGTERM');
    const file = await readFile(join(dir.path, '.clockhook', 'captures.json'), 'utf8');
    expect(file).toContain('evt_k');
    expect(file).not.toContain(sandbox.apiKey);
  });
});

describe('crash safety', () => {
  it('kill -9 during a burst loses no delivery that was answered 2xx', async () => {
    const secret = 'whsec_burst';
    // Capture-only: the answer follows the capture write directly, so an early answer would show.
    const proc = await listen('--secret', secret);
    const answered: string[] = [];
    let stop = false;
    const sender = async (worker: number) => {
      for (let i = 0; !stop; i++) {
        const body = envelopeBody(`evt_${worker}_${i}`, { created: 1 });
        try {
          const res = await postSigned(proc.ready.listener, body, secret);
          if (res.status >= 200 && res.status < 300) answered.push(`evt_${worker}_${i}`);
        } catch {
          return; // the listener is gone
        }
      }
    };
    const senders = Array.from({ length: 8 }, (_, w) => sender(w));
    await proc.waitForLine(() => proc.lines.filter((l) => l.event === 'delivery').length >= 300);
    proc.child.kill('SIGKILL');
    stop = true;
    await Promise.all(senders);
    await proc.exited;
    expect(answered.length).toBeGreaterThanOrEqual(300);
    const stored = new Set((await readCaptures(dir.path)).map((c) => c.envelope?.id));
    const lost = answered.filter((id) => !stored.has(id));
    expect(lost).toEqual([]);
    // And it starts again on that store.
    const again = await listen('--secret', secret);
    expect(again.ready.listener).toMatch(/^http:/);
  });
});
