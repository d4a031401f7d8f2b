import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/contract/index.js';
import { type ListenSession, startListen } from '../../src/listen/index.js';
import { portForRestarts } from '../helpers/ports.js';
import { tempDir } from '../helpers/sandbox.js';

/** The code blocks of one language in the README's "Verify the signature in your app" section. */
async function readmeBlock(language: string): Promise<string> {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Verify the signature in your app'));
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(section.slice(0, section.indexOf('\n## ', 3)));
  if (!block) throw new Error(`README.md has no ${language} block under "Verify the signature in your app"`);
  return block[1];
}

/** Starts a README receiver on a free port and collects what it prints. */
async function startReceiver(command: string, file: string, secret: string, port: number) {
  const child: ChildProcess = spawn(command, [file], {
    env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  // Ready once it takes a connection (a Python start on a busy machine takes a moment).
  await expect
    .poll(
      () =>
        fetch(`http://127.0.0.1:${port}/`, { method: 'POST' }).then(
          (r) => r.status,
          () => 0,
        ),
      {
        timeout: 15_000,
      },
    )
    .toBe(400);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { output: () => output, stop: () => (child.kill(), exited) };
}

let dir: Awaited<ReturnType<typeof tempDir>>;
let session: ListenSession;
let appPort: number;

beforeAll(async () => {
  dir = await tempDir();
  appPort = await portForRestarts();
  // listen forwards to the app's port, which each test's receiver takes in turn.
  session = await startListen({
    forwardTo: `http://127.0.0.1:${appPort}/`,
    port: 0,
    sandboxPort: 0,
    inspector: false,
    stateDir: join(dir.path, '.clockhook'),
  });
}, 30_000);

afterAll(async () => {
  await session?.close();
  await dir?.remove();
});

describe.each([
  { language: 'js', command: process.execPath, file: 'receiver.mjs' },
  { language: 'python', command: 'python3', file: 'receiver.py' },
])("the README's $language receiver", ({ language, command, file }) => {
  it('accepts a real delivery forwarded by clockhook listen and refuses a forged one', async () => {
    const path = join(dir.path, file);
    await writeFile(path, await readmeBlock(language));
    const app = await startReceiver(command, path, session.secret as string, appPort);
    try {
      const event = await session.client!.request<{ id: string }>('POST', '/sandbox/events', {
        body: { type: 'punch.created' },
      });
      await expect.poll(app.output, { timeout: 15_000 }).toContain(`received punch.created ${event.id}`);
      const forged = await fetch(`http://127.0.0.1:${appPort}/`, {
        method: 'POST',
        headers: { 'x-service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
        body: JSON.stringify({ id: 'evt_forged', type: 'punch.created' }),
      });
      expect(forged.status).toBe(400);
      expect(app.output()).not.toContain('evt_forged');
    } finally {
      await app.stop();
    }
  }, 40_000);

  it('refuses to start with an empty secret, saying where it comes from', async () => {
    const path = join(dir.path, file);
    await writeFile(path, await readmeBlock(language));
    const child = spawn(command, [path], {
      env: { ...process.env, WEBHOOK_SECRET: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('Set WEBHOOK_SECRET to the endpoint secret: npx clockhook secret prints it');
  }, 20_000);

  // One rule for the signature's age: listen and the README's receiver give the same verdict at the edge of
  // the 300 s window, old or ahead. Each request is made at a moment chosen by the clock's fraction of a
  // second, so that its age is the one named (to within the few ms the sends take).
  it('agrees with listen on signatures ±299.4, ±300.6 and ±301 s from now', async () => {
    const path = join(dir.path, file);
    await writeFile(path, await readmeBlock(language));
    const app = await startReceiver(command, path, session.secret as string, appPort);
    try {
      for (const age of [299.4, -299.4, 300.6, -300.6, 301, -301]) {
        const { header, body } = await signedAtAge(age, session.secret as string);
        const headers = { 'x-service-signature': header, 'content-type': 'application/json' };
        const [viaListen, direct] = await Promise.all([
          fetch(session.ready.listener, { method: 'POST', headers, body }),
          fetch(`http://127.0.0.1:${appPort}/`, { method: 'POST', headers, body }),
        ]);
        const listenRefused = viaListen.status === 400 && (await viaListen.text()).includes('signature_invalid');
        const expected = Math.abs(age) <= 300;
        expect({ age, listen: !listenRefused, app: direct.status === 200 }).toEqual({
          age,
          listen: expected,
          app: expected,
        });
      }
    } finally {
      await app.stop();
    }
  }, 60_000);
});

/** A delivery signed so that, sent now, its age (now − t, seconds) is `age`: it waits for the right fraction of a second. */
async function signedAtAge(age: number, secret: string): Promise<{ header: string; body: string }> {
  const wanted = (((age % 1) + 1) % 1) + (Number.isInteger(age) ? 0.05 : 0); // now's fraction, for an integer t
  for (;;) {
    const now = Date.now() / 1000;
    const fraction = now % 1;
    if (Math.abs(fraction - wanted) < 0.04) {
      const t = Math.round(now - age);
      const body = JSON.stringify({ id: `evt_age_${age}_${Date.now()}`, type: 'punch.created', object: 'event' });
      return { header: signPayload({ payload: body, secret, timestamp: t }), body };
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
