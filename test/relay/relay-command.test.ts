// clockhook relay, the command, and a relay that serves TLS itself.
import { readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { channelFor } from '../../src/relay/index.js';
import { runCli } from '../helpers/cli.js';
import { post, startListenProcess } from '../helpers/listen.js';
import { portForRestarts } from '../helpers/ports.js';
import { app, dir, envelope, procs, relay, relayOn, signed, useRelayRig } from './relay-rig.js';

useRelayRig();

describe('a relay that serves TLS itself (--tls-cert, --tls-key)', () => {
  // test/fixtures/localhost-*.pem: a self-signed certificate for localhost and 127.0.0.1, for tests only.
  const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
  const listenArgs = (relayUrl: string) => [
    'listen',
    '--port',
    '0',
    '--sandbox-port',
    '0',
    '--inspector-port',
    '0',
    '--relay',
    relayUrl,
    '--json',
  ];

  it('relays over https to a listener that trusts its certificate, and tells one that does not what to do', async () => {
    const tls = await relayOn(0, { tlsCert: fixture('localhost-cert.pem'), tlsKey: fixture('localhost-key.pem') });
    try {
      expect(tls.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const untrusted = await runCli(listenArgs(tls.url), { cwd: dir.path });
      expect(untrusted.code).toBe(1);
      expect(untrusted.stderr).toContain(
        `could not connect to the relay at ${tls.url}: self-signed certificate. This machine does not trust the relay's TLS certificate.`,
      );
      expect(untrusted.stderr).toContain('NODE_EXTRA_CA_CERTS=its-cert.pem npx clockhook listen --relay');

      const proc = await startListenProcess(['--relay', tls.url, '--forward-to', app.url, '--print-secret'], dir.path, {
        NODE_EXTRA_CA_CERTS: fixture('localhost-cert.pem'),
      });
      procs.push(proc);
      expect(proc.ready.publicUrl.startsWith(`${tls.url}/c/`)).toBe(true);
      const body = envelope('evt_over_tls');
      const ca = await readFile(fixture('localhost-cert.pem'));
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpsRequest(
          proc.ready.publicUrl,
          { method: 'POST', ca, headers: { 'content-type': 'application/json', ...signed(body, proc.ready.secret) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(answer).toEqual({ status: 201, text: body });
      expect(app.received.at(-1)?.headers['x-forwarded-proto']).toBe('https');
    } finally {
      await tls.close();
    }
  });

  it('tells a listener given https:// for a relay that serves plain HTTP to give http://', async () => {
    const res = await runCli(listenArgs(relay.url.replace(/^http:/, 'https:')), { cwd: dir.path });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      'the TLS handshake failed: the relay does not seem to speak TLS (is its address http://?). A relay that serves plain HTTP (no --tls-cert, no TLS proxy in front) is reached with --relay http://…',
    );
  });
});

describe('clockhook relay (the command)', () => {
  it('prints a ready line and one line per relayed request, never bodies or tokens; exits 0 on SIGTERM', async () => {
    const { spawnCli } = await import('../helpers/cli.js');
    const proc = spawnCli(
      [
        'relay',
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--public-url',
        'https://hooks.example.com',
        '--json',
        '--max-body',
        '1kb',
      ],
      { cwd: dir.path },
    );
    procs.push(proc);
    const ready = await proc.waitForLine((l) => l.event === 'ready');
    expect(ready).toEqual({
      event: 'ready',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      publicUrl: 'https://hooks.example.com',
    });
    const channel = channelFor('t'.repeat(43));
    const res = await post(`${ready.url}/c/${channel}/x?secret=abc`, 'body-text');
    expect(res.status).toBe(404);
    const line = await proc.waitForLine((l) => l.event === 'request');
    expect(line).toEqual({
      event: 'request',
      channel,
      method: 'POST',
      path: '/x',
      status: 404,
      durationMs: expect.any(Number),
    });
    expect(proc.lines.map((l) => JSON.stringify(l)).join('\n')).not.toMatch(/body-text|secret=abc/);
    expect(await proc.stop('SIGTERM')).toBe(0);
  });

  it('exits 1 at once, saying so, when its Redis cannot be reached', async () => {
    const port = await portForRestarts();
    const res = await runCli(['relay', '--port', '0', '--redis', `redis://127.0.0.1:${port}`], { cwd: dir.path });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`could not reach Redis at redis://127.0.0.1:${port}`);
    expect(res.stderr).toContain('Is Redis running, and is --redis its URL?');
  });

  // Thirteen starts of the CLI in a row: seconds each on two busy cores.
  it('refuses bad flags with exit 2', async () => {
    for (const args of [
      ['--max-body', 'huge'],
      ['--max-buffer', 'lots'],
      ['--tls-cert', 'x.pem'],
      ['--public-url', 'not a url'],
      ['--port', '70000'],
    ]) {
      expect((await runCli(['relay', ...args], { cwd: dir.path })).code, args.join(' ')).toBe(2);
    }
    const refusals: [string[], string][] = [
      [
        ['--max-body', '0'],
        'clockhook: --max-body must be more than 0 bytes (got 0): every delivery would get 413. The default is 5mb.\n',
      ],
      [
        ['--public-url', 'https://hooks.example.com/?a'],
        'clockhook: --public-url https://hooks.example.com/?a has a query or fragment; give the base URL only, e.g. https://hooks.example.com\n',
      ],
      [
        ['--public-url', 'ftp://hooks.example.com'],
        'clockhook: --public-url ftp://hooks.example.com is not an http(s) URL; e.g. https://hooks.example.com\n',
      ],
      [
        ['--public-url', 'https://example.com/hooks'],
        "clockhook: --public-url https://example.com/hooks has a path; the relay serves listeners and deliveries at the root of its host, so give the origin only, e.g. https://example.com, and proxy that host name's root to it.\n",
      ],
      [
        ['--redis', 'localhost:6379'],
        'clockhook: --redis takes a Redis URL, e.g. redis://127.0.0.1:6379/0 (got localhost:6379).\n',
      ],
      [
        ['--redis', 'redis://127.0.0.1:6379', '--keys', 'keys.json'],
        'clockhook: --keys is for a relay without Redis: with --redis the keys are kept in Redis (relay keys add … --redis).\n',
      ],
    ];
    for (const [args, message] of refusals) {
      const res = await runCli(['relay', '--port', '0', ...args], { cwd: dir.path });
      expect(res, args.join(' ')).toMatchObject({ code: 2, stderr: message });
    }
    const small = await runCli(['relay', '--max-body', '10mb', '--max-buffer', '32mb'], { cwd: dir.path });
    expect(small).toMatchObject({ code: 2 }); // the whole result when not: its stderr says why
    expect(small.stderr).toContain('--max-buffer must be at least 4 × --max-body');
    expect(small.stderr).toContain('at least 40mb');
    const missing = await runCli(
      ['relay', '--port', '0', '--tls-cert', 'missing.pem', '--tls-key', 'missing-key.pem'],
      { cwd: dir.path },
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^clockhook: cannot read the TLS file \S*missing(-key)?\.pem: no such file\. Give the PEM files/,
    );
  }, 60_000);
});
