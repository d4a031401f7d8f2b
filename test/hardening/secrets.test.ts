import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type SpawnedCli, spawnCli } from '../helpers/cli.js';
import { connectClient } from '../helpers/inspector.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('the API key and the endpoint secret', () => {
  it('appear in no WebSocket message, page, log line or capture', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const app = await startReceiver();
    cleanups.push(app.close);
    // For people (not --json), so every log line a person would see is searched too.
    const listen: SpawnedCli = spawnCli(
      ['listen', '--port', '0', '--sandbox-port', '0', '--inspector-port', '0', '--forward-to', app.url, '--no-open'],
      { cwd: dir.path },
    );
    cleanups.push(() => listen.stop('SIGKILL'));
    const inspectorLine = await listen.waitForLine((l) => typeof l.text === 'string' && l.text.includes('Inspector'));
    const inspectorUrl = new URL(inspectorLine.text.trim().split(/\s+/).pop());
    const { apiKey } = JSON.parse(await readFile(join(dir.path, '.clockhook', 'sandbox.json'), 'utf8'));
    const [{ secret }] = JSON.parse(await readFile(join(dir.path, '.clockhook', 'endpoints.json'), 'utf8'));
    expect(apiKey).toMatch(/^tt_live_/);
    expect(secret).toMatch(/^whsec_/);

    const client = await connectClient(`ws://${inspectorUrl.host}/ws?token=${inspectorUrl.searchParams.get('token')}`);
    const event = JSON.parse((await runCli(['trigger', 'punch.created', '--json'], { cwd: dir.path })).stdout);
    const capture = await client.waitFor(
      (m) => m.type === 'capture' && m.capture.envelope?.id === event.id && m.capture.forward,
    );
    await client.act({ type: 'replay', captureId: capture.capture.id, mode: 'resign' });
    await client.act({ type: 'ping' });
    await client.act({ type: 'redeliver', eventId: event.id });
    await client.act({ type: 'attempts', eventId: event.id });
    await client.act({ type: 'enable-endpoint' });
    await client.waitFor((m) => m.type === 'capture' && m.capture.source === 'delivery' && m.capture.duplicateOf);
    client.close();

    const pages = await Promise.all(
      ['/', '/app.js', '/render.js', '/style.css'].map(async (path) =>
        (await fetch(`http://${inspectorUrl.host}${path}`)).text(),
      ),
    );
    expect(await listen.stop('SIGTERM')).toBe(0);
    const store = await readFile(join(dir.path, '.clockhook', 'captures.json'), 'utf8');
    const logs = `${listen.lines.map((l) => l.text ?? JSON.stringify(l)).join('\n')}\n${listen.stderr}`;

    for (const [where, text] of [
      ['WebSocket messages', client.raw.join('\n')],
      ['pages', pages.join('\n')],
      ['log lines', logs],
      ['captures', store],
    ] as const) {
      expect(text.length, where).toBeGreaterThan(100);
      expect(text.includes(apiKey), `API key in ${where}`).toBe(false);
      expect(text.includes(secret), `secret in ${where}`).toBe(false);
    }
    // What a person does see: the masked hint.
    expect(logs).toContain(`whsec_…${secret.slice(-4)}`);
  }, 30_000);
});
