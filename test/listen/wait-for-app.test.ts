import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { postSigned, readCaptures, startListenProcess } from '../helpers/listen.js';
import { portForRestarts } from '../helpers/ports.js';
import { tempDir } from '../helpers/sandbox.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

const APP = fileURLToPath(new URL('../fixtures/recording-app.mjs', import.meta.url));

/** The ids every run of the app received, in order. */
const received: string[] = [];
const apps: ChildProcess[] = [];
let listen: Awaited<ReturnType<typeof startListenProcess>> | undefined;

afterEach(async () => {
  await listen?.stop('SIGKILL');
  listen = undefined;
  for (const app of apps.splice(0)) app.kill('SIGKILL');
  received.length = 0;
});

/** Starts the recording app on `port`; resolves once it listens (a start takes a while on busy cores). */
function startApp(port: number): Promise<ChildProcess> {
  const app = spawn(process.execPath, [APP], { env: { ...process.env, PORT: String(port) } });
  apps.push(app);
  let buffer = '';
  return new Promise((resolve, reject) => {
    app.once('exit', (code) => reject(new Error(`the app exited with ${code} before it was ready`)));
    app.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (line === 'ready') resolve(app);
        else if (line.startsWith('received ')) received.push(line.slice('received '.length));
      }
    });
  });
}

const delivery = (id: string) => envelopeBody(id);

describe('listen --wait-for-app', () => {
  it('holds deliveries while the app restarts: every one of a burst is answered 2xx and reaches the app once', async () => {
    const dir = await tempDir();
    const port = await portForRestarts();
    let app = await startApp(port);
    listen = await startListenProcess(['--secret', SECRET, '--forward-to', String(port), '--no-inspector'], dir.path);
    const ids = Array.from({ length: 50 }, (_, i) => `evt_restart_${i}`);
    const statuses = new Map<string, number>();
    let next = 0;
    let restarted: Promise<unknown> = Promise.resolve();
    await Promise.all(
      Array.from({ length: 5 }, async () => {
        while (next < ids.length) {
          const i = next++;
          if (i === 15) {
            // As a file watcher does on a save: the app stops, and is started again 2 s later.
            const stopping = app;
            stopping.kill('SIGTERM');
            restarted = new Promise((resolve) => stopping.once('exit', resolve))
              .then(() => new Promise((resolve) => setTimeout(resolve, 2_000)))
              .then(async () => (app = await startApp(port)));
          }
          statuses.set(ids[i], (await postSigned(listen!.ready.listener, delivery(ids[i]), SECRET)).status);
        }
      }),
    );
    await restarted;
    expect(
      [...statuses.values()].every((status) => status === 200),
      JSON.stringify([...statuses]),
    ).toBe(true);
    expect([...received].sort()).toEqual([...ids].sort()); // each once
    const lines = listen.lines;
    expect(lines.find((l) => l.event === 'app' && l.state === 'down')).toMatchObject({ waitMs: 10_000 });
    const up = lines.find((l) => l.event === 'app' && l.state === 'up');
    expect(up.downMs).toBeGreaterThanOrEqual(1_500);
    expect(up.delivered).toBeGreaterThanOrEqual(1);
    const held = lines.filter((l) => l.event === 'delivery' && l.waitedMs > 0);
    expect(held.length).toBeGreaterThanOrEqual(1);
    await listen.stop('SIGINT');
    listen = undefined;
    const captures = await readCaptures(dir.path);
    expect(captures.filter((c) => (c.forward?.waitedMs ?? 0) > 0)).toHaveLength(held.length);
  }, 60_000);

  it('answers 502 after the wait when the app stays down, well within the service limit', async () => {
    const dir = await tempDir();
    const port = await portForRestarts();
    listen = await startListenProcess(
      ['--secret', SECRET, '--forward-to', String(port), '--no-inspector', '--wait-for-app', '2'],
      dir.path,
    );
    const started = Date.now();
    const res = await postSigned(listen.ready.listener, delivery('evt_down'), SECRET);
    const took = Date.now() - started;
    expect(res.status).toBe(502);
    expect(JSON.parse(res.text).error.message).toMatch(/not answering for 2(\.\d)? s \(--wait-for-app\)/);
    expect(took).toBeGreaterThanOrEqual(2_000);
    expect(took).toBeLessThan(30_000);
    // Said at start as it then happens.
    expect(listen.stderr).toContain(
      'yet. Deliveries are still captured, held up to 2 s each for the app (--wait-for-app), then answered 502;',
    );
    // Off: at once.
    await listen.stop('SIGKILL');
    listen = await startListenProcess(
      ['--secret', SECRET, '--forward-to', String(port), '--no-inspector', '--wait-for-app', '0'],
      dir.path,
    );
    const at = Date.now();
    expect((await postSigned(listen.ready.listener, delivery('evt_off'), SECRET)).status).toBe(502);
    expect(Date.now() - at).toBeLessThan(2_000);
    expect(listen.stderr).toContain('yet. Deliveries are still captured (and answered 502);');
  }, 60_000);

  it('answers the deliveries it holds at once when it stops, and sends each again without adding listeners', async () => {
    const dir = await tempDir();
    const port = await portForRestarts();
    const args = ['--secret', SECRET, '--forward-to', String(port), '--no-inspector', '--wait-for-app', '25'];
    // Node warns of a leak past 3 listeners (10 by default): each send again must not add to the request's.
    const warnEarly = `--import=data:text/javascript,import{EventEmitter}from'node:events';EventEmitter.defaultMaxListeners=3`;
    listen = await startListenProcess(args, dir.path, { NODE_OPTIONS: warnEarly });
    const held = Array.from({ length: 20 }, (_, i) =>
      postSigned(listen!.ready.listener, delivery(`evt_held_at_stop_${i}`), SECRET),
    );
    await expect.poll(() => listen!.lines.some((l) => l.event === 'app' && l.state === 'down')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // each sent again 5 times (100 ms, 200, 400…)
    const stopping = Date.now();
    const stopped = listen.stop('SIGINT');
    expect((await Promise.all(held)).map((res) => res.status)).toEqual(Array(20).fill(502));
    await stopped;
    expect(Date.now() - stopping).toBeLessThan(10_000);
    expect(listen.stderr).not.toContain('MaxListenersExceededWarning');
    listen = undefined;
  }, 60_000);

  it('refuses a wait that would pass the service limit, saying the limit', async () => {
    const dir = await tempDir();
    const res = await runCli(['listen', '--port', '0', '--wait-for-app', '30'], { cwd: dir.path });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^clockhook: --wait-for-app 30: the service gives a delivery 30 s/);
  });
});
