// The receiver's whole loop in one command: `listen -- <command>` starts the app with the secret and its port, says
// when it exits and stops it with listen; `--exec <command>` runs a command per delivery. Real listen processes
// (embedded sandbox), real apps, real signals.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type SpawnedCli, spawnCli } from '../helpers/cli.js';
import { connectClient } from '../helpers/inspector.js';
import { portForRestarts } from '../helpers/ports.js';
import { tempDir } from '../helpers/sandbox.js';

type Json = Record<string, any>;
let dir: Awaited<ReturnType<typeof tempDir>>;
const procs: SpawnedCli[] = [];
const cli = (...args: string[]) => runCli(args, { cwd: dir.path });
const text = (p: SpawnedCli) =>
  stripVTControlCharacters(`${p.lines.map((l) => l.text ?? JSON.stringify(l)).join('\n')}\n${p.stderr}`);

/** An app that verifies each delivery with $WEBHOOK_SECRET on $PORT, prints what it got, and exits on an "exit". */
const APP = `import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
const secret = process.env.WEBHOOK_SECRET;
console.log('env', secret ? 'secret' : 'no secret', process.env.PORT, process.env.CLOCKHOOK_LISTEN_URL);
createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const { t, v1 } = Object.fromEntries((req.headers['x-service-signature'] ?? '').split(',').map((p) => p.split('=')));
    const ok = v1 === createHmac('sha256', secret).update(t + '.').update(body).digest('hex');
    const event = JSON.parse(body);
    console.log(ok ? 'verified' : 'forged', event.type, event.id);
    res.writeHead(ok ? 200 : 400).end();
    if (event.type === 'employee.deleted') setTimeout(() => process.exit(7), 50);
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** A handler run once per delivery: exit 0, 3 with a word on stderr, or too slow, by the event's type. */
const HANDLER = `#!/bin/sh
body=$(cat)
echo "ran $CLOCKHOOK_EVENT_TYPE attempt $CLOCKHOOK_ATTEMPT $(printf %s "$body" | head -c 20)"
case "$CLOCKHOOK_EVENT_TYPE" in
  punch.deleted) echo "no deletes here" >&2; exit 3;;
  punch.updated) sleep 10;;
esac
`;

beforeAll(async () => {
  dir = await tempDir();
  await writeFile(join(dir.path, 'app.mjs'), APP);
  await writeFile(join(dir.path, 'handle.sh'), HANDLER, { mode: 0o755 });
});

afterAll(async () => {
  for (const p of procs) await p.stop('SIGKILL');
  await dir?.remove();
});

async function listen(...args: string[]) {
  const p = spawnCli(['listen', '--port', '0', '--sandbox-port', '0', '--inspector-port', '0', '--no-open', ...args], {
    cwd: dir.path,
  });
  procs.push(p);
  await p.waitForLine((l) => /Inspector/.test(l.text ?? ''), 30_000);
  return p;
}

const pidAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('listen -- <command>', () => {
  it('starts the app with the secret and its port, a trigger reaches it verified, and listen stops it', async () => {
    const port = await portForRestarts();
    const p = await listen('--forward-to', String(port), '--', process.execPath, 'app.mjs');
    const started = await p.waitForLine((l) => /^Started /.test(stripVTControlCharacters(l.text ?? '')));
    expect(stripVTControlCharacters(started.text)).toMatch(/with CLOCKHOOK_LISTEN_URL, WEBHOOK_SECRET, PORT=\d+$/);
    const pid = Number(/\(pid (\d+)\)/.exec(started.text)![1]);
    await expect.poll(() => text(p), { timeout: 10_000 }).toContain(`app │ env secret ${port} http://127.0.0.1:`);
    const event = JSON.parse((await cli('trigger', 'punch.created', '--json')).stdout) as Json;
    await expect.poll(() => text(p), { timeout: 10_000 }).toContain(`app │ verified punch.created ${event.id}`);
    expect(pidAlive(pid)).toBe(true);
    expect(await p.stop('SIGINT')).toBe(0);
    await expect.poll(() => pidAlive(pid), { timeout: 10_000 }).toBe(false);
  }, 60_000);

  it('says when the app exits on its own, and keeps capturing: a delivery after is held, then answered 502', async () => {
    const port = await portForRestarts();
    const p = await listen('--forward-to', String(port), '--wait-for-app', '1', '--', process.execPath, 'app.mjs');
    await expect.poll(() => text(p), { timeout: 10_000 }).toContain('app │ env secret');
    const inspector = /Inspector\s+(\S+)/.exec(text(p))![1];
    const page = await connectClient(inspector.replace(/^http/, 'ws').replace('/?', '/ws?'));
    await cli('trigger', 'employee.deleted'); // the app answers it, then exits with code 7
    const exited = `${process.execPath} app.mjs exited with code 7`;
    await expect.poll(() => text(p), { timeout: 10_000 }).toContain(`${exited}. listen keeps capturing`);
    // The page is told too.
    await page.waitFor((m) => m.type === 'app' && m.state === 'down' && m.exited === exited);
    page.socket.close();
    const after = JSON.parse((await cli('trigger', 'punch.created', '--json')).stdout) as Json;
    await expect.poll(() => text(p), { timeout: 15_000 }).toMatch(new RegExp(`\\[${after.id}\\].*\\[no answer\\]`));
    const [capture] = (await cli('captures', 'list', '--limit', '1', '--json')).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(capture).toMatchObject({ envelope: { id: after.id }, story: { status: 'no answer' } });
    expect(capture.forward.waitedMs).toBeGreaterThan(500);
    expect(await p.stop('SIGINT')).toBe(0);
  }, 60_000);
});

describe('listen --exec <command>', () => {
  it('runs the command per delivery: exit 0 is 200, exit 3 its 500 with stderr, a run past the time-out is killed; each replayable', async () => {
    const p = await listen('--exec', './handle.sh', '--timeout', '1500');
    const ids: Record<string, string> = {};
    for (const type of ['punch.created', 'punch.deleted', 'punch.updated'])
      ids[type] = (JSON.parse((await cli('trigger', type, '--json')).stdout) as Json).id;
    const story = async (id: string) =>
      (await cli('captures', 'list', '--json')).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Json)
        .find((c) => c.envelope?.id === id && c.forward)?.story;
    await expect.poll(() => story(ids['punch.created']), { timeout: 15_000 }).toMatchObject({ status: '200' });
    await expect
      .poll(() => story(ids['punch.deleted']), { timeout: 15_000 })
      .toMatchObject({
        status: '500',
        answer: 'no deletes here',
      });
    await expect.poll(() => story(ids['punch.updated']), { timeout: 15_000 }).toMatchObject({ status: 'no answer' });
    expect(text(p)).toContain('exec │ ran punch.created attempt 1 {"id":"evt_');
    // Replayed through listen: run again, recorded as a replay.
    const [failed] = (await cli('captures', 'list', '--json')).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json)
      .filter((c) => c.envelope?.id === ids['punch.deleted']);
    const replayed = JSON.parse((await cli('replay', failed.id, '--json')).stdout) as Json;
    expect(replayed).toMatchObject({ via: 'listen', status: 500, answer: 'no deletes here' });
    await expect.poll(() => text(p)).toContain('exec │ ran punch.deleted attempt replay');
    // --exec and --forward-to name two apps: refused.
    const both = await cli('listen', '--exec', './handle.sh', '--forward-to', '3000');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--exec runs a command as the app, and --forward-to names an app');
  }, 60_000);
});
