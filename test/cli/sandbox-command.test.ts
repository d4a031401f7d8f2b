// clockhook sandbox, events get at its --time-scale, and the commands with no sandbox or key to use.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../helpers/cli.js';
import { startReceiver } from '../helpers/receiver.js';
import { portForRestarts } from '../helpers/ports.js';
import { startFolderSandbox, tempDir } from '../helpers/sandbox.js';
import { startScriptedServer } from '../helpers/scripted-server.js';
import { app, dir, sandbox, useSandboxFolder } from './sandbox-folder.js';

useSandboxFolder();

describe('without a sandbox or key', () => {
  it('says how to start a sandbox or pass a key, exit 1', async () => {
    const empty = await tempDir();
    const res = await runCli(['events', 'list'], { cwd: empty.path });
    await empty.remove();
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('npx clockhook sandbox');
    expect(res.stderr).toContain('--api-key');
  });

  it('says what is wrong with the flags first (exit 2), before looking for a sandbox or key', async () => {
    const empty = await tempDir();
    const runs = await Promise.all(
      [
        ['events', 'list', '--limit', 'lots'],
        ['endpoints', 'list', '--limit', '0'],
        ['endpoints', 'get', 'abc'],
        ['endpoints', 'delete', 'abc'],
        ['endpoints', 'ping', 'abc'],
        ['endpoints', 'enable', 'abc'],
        ['endpoints', 'update', 'abc', '--status', 'enabled'],
      ].map((args) => runCli(args, { cwd: empty.path }).then((res) => ({ args: args.join(' '), ...res }))),
    );
    await empty.remove();
    for (const res of runs) {
      expect(res.code, res.args).toBe(2);
      expect(res.stderr, res.args).toMatch(/--limit|endpoint id/);
    }
  });

  it('trigger against the real service explains that events come from real actions', async () => {
    const service = await startScriptedServer([
      { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_not_found', message: 'no' } } },
    ]);
    const res = await runCli(['trigger', 'punch.created'], {
      cwd: dir.path,
      env: { CLOCKHOOK_API_KEY: 'tt_live_x', CLOCKHOOK_API_BASE: service.url },
    });
    await service.close();
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('real actions');
    expect(res.stderr).toContain('npx clockhook endpoints ping');
  });

  it('uses CLOCKHOOK_API_KEY and CLOCKHOOK_API_BASE from the environment', async () => {
    const empty = await tempDir();
    const res = await runCli(['endpoints', 'list', '--json'], {
      cwd: empty.path,
      env: { CLOCKHOOK_API_KEY: sandbox.apiKey, CLOCKHOOK_API_BASE: sandbox.apiBase },
    });
    await empty.remove();
    expect(res.code).toBe(0);
    expect(Array.isArray(JSON.parse(res.stdout).data)).toBe(true);
  });
});

describe('clockhook sandbox', () => {
  it('prints a ready line, one line per attempt, and exits 0 on SIGTERM removing its discovery file', async () => {
    const folder = await tempDir();
    const proc = spawnCli(['sandbox', '--port', '0', '--json', '--time-scale', '0.001'], { cwd: folder.path });
    try {
      const ready = await proc.waitForLine((l) => l.event === 'ready');
      expect(ready).toEqual({
        event: 'ready',
        apiBase: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        apiKey: expect.stringMatching(/^tt_live_/),
        account: expect.any(String),
      });
      expect(proc.lines[0]).toBe(ready);
      await runCli(['endpoints', 'create', '--url', app.url], { cwd: folder.path });
      await runCli(['trigger', 'punch.created'], { cwd: folder.path });
      const attempt = await proc.waitForLine((l) => l.event === 'attempt');
      expect(attempt).toMatchObject({ type: 'punch.created', statusCode: 200, outcome: 'delivered', attempt: 1 });
      // A second one in the folder, on another port, would write over the first one's state: refused.
      const second = await runCli(['sandbox', '--port', '0'], { cwd: folder.path });
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(
        `clockhook: .clockhook/sandbox-db.json is in use by the sandbox running at ${ready.apiBase} (pid ${proc.child.pid}), which the other commands in this folder use. Stop that one first, or give this one its own state with --db.\n`,
      );
      expect(await proc.stop('SIGTERM')).toBe(0);
      await expect(stat(join(folder.path, '.clockhook', 'sandbox.json'))).rejects.toThrow(/ENOENT/);
    } finally {
      await proc.stop('SIGKILL');
      await folder.remove();
    }
  });

  it('prints its ready line first, before the attempts that came due while it was stopped', async () => {
    const folder = await tempDir();
    const args = ['sandbox', '--port', '0', '--json', '--time-scale', '0.001'];
    const first = spawnCli(args, { cwd: folder.path });
    let second: ReturnType<typeof spawnCli> | undefined;
    try {
      await first.waitForLine((l) => l.event === 'ready');
      // Nothing listens there: every attempt is refused, and the next is due 60 ms later.
      await runCli(['endpoints', 'create', '--url', `http://127.0.0.1:${await portForRestarts()}/`], {
        cwd: folder.path,
      });
      await runCli(['trigger', 'punch.created'], { cwd: folder.path });
      await first.waitForLine((l) => l.event === 'attempt');
      expect(await first.stop('SIGTERM')).toBe(0);
      second = spawnCli(args, { cwd: folder.path });
      await second.waitForLine((l) => l.event === 'attempt');
      expect(second.lines[0]).toMatchObject({ event: 'ready' });
    } finally {
      await first.stop('SIGKILL');
      await second?.stop('SIGKILL');
      await folder.remove();
    }
  });

  it('refuses a taken port with a message naming it, exit 1', async () => {
    const folder = await tempDir();
    const port = new URL(sandbox.apiBase).port;
    const res = await runCli(['sandbox', '--port', port], { cwd: folder.path });
    await folder.remove();
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`port ${port}`);
  });

  it('refuses a port fetch will not connect to, exit 2, before anything starts', async () => {
    const folder = await tempDir();
    const res = await runCli(['sandbox', '--port', '6667'], { cwd: folder.path });
    const made = await readdir(folder.path);
    await folder.remove();
    expect(res).toMatchObject({
      code: 2,
      stderr:
        'clockhook: --port 6667: fetch, which clockhook calls the sandbox with, cannot reach that port (the Fetch standard blocks it, with 9, 6667 and others); pick another --port.\n',
    });
    expect(made).toEqual([]);
  });
});

describe('events get with a sandbox on a --time-scale', () => {
  /** A sandbox of its own folder at `timeScale`, an endpoint whose every attempt is refused, and one event for it. */
  async function refusedEvent(timeScale: number) {
    const folder = await tempDir();
    const scaled = await startFolderSandbox(folder.path, { timeScale });
    const run = (...args: string[]) => runCli(args, { cwd: folder.path });
    // Nothing listens on the port of a closed server.
    const closed = await startReceiver();
    await closed.close();
    const endpoint = JSON.parse((await run('endpoints', 'create', '--url', `${closed.url}/gone`, '--json')).stdout);
    const event = JSON.parse((await run('trigger', 'punch.created', '--json')).stdout);
    const close = async () => {
      await scaled.close();
      await folder.remove();
    };
    return { shown: async () => (await run('events', 'get', event.id)).stdout, endpoint, close };
  }

  it('scales the retry times as that sandbox does', async () => {
    const { shown, close } = await refusedEvent(0.001);
    try {
      // The contract's 1 min, 5 min, 30 min and 2 h before attempts 2 to 5, times 0.001. Which attempt is
      // next when the command looks depends on how fast it starts.
      const scaledDelays: Record<string, string> = { 2: '60 ms', 3: '300 ms', 4: '2 s', 5: '7 s' };
      const next =
        /attempt (\d) of 5 (?:is|was) due at about \S+, (\d+ m?s) after attempt \d \(the service's retry policy, times the sandbox's --time-scale 0.001\)/;
      let waiting: RegExpExecArray | null = null;
      await expect.poll(async () => (waiting = next.exec(await shown())), { timeout: 10_000 }).not.toBeNull();
      const [, attempt, delay] = waiting as unknown as RegExpExecArray;
      expect(delay).toBe(scaledDelays[attempt]);
    } finally {
      await close();
    }
  });

  it('says when the service has given up', async () => {
    const { shown, endpoint, close } = await refusedEvent(0.00001);
    try {
      await expect
        .poll(shown, { timeout: 10_000 })
        .toContain(`\nEndpoint ${endpoint.id}: the service gave up after its 5 attempts.\nTo send the event again now`);
    } finally {
      await close();
    }
  });
});
