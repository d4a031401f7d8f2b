// What the install test does in the app it installs into: the apps and tests it writes there, and the commands
// it runs there as a user would (test/install/install.test.ts).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** A small app that prints the id of every POST it gets, answering 200. */
export const APP = `import { createServer } from 'node:http';
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    console.log('delivery ' + JSON.parse(Buffer.concat(chunks)).id);
    res.end('ok');
  });
});
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
`;

/** A CommonJS receiver: 200 for a delivery whose signature holds with `secret()`, 400 otherwise. */
export const CJS_RECEIVER = `const { createServer } = require('node:http');
const { verifySignature } = require('clockhook');
exports.createReceiver = (secret) =>
  createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const header = req.headers['x-service-signature'];
      const { ok } = verifySignature({ header, payload: Buffer.concat(chunks), secret: secret() });
      res.writeHead(ok ? 200 : 400).end();
    });
  });
`;

/** Its tests, for node:test (with \`test\` required first) and for jest (whose \`test\` is a global). */
export const CJS_TEST = `const assert = require('node:assert');
const { createReceiver } = require('./receiver.js');
const { playScenario, sendDelivery, startSandbox } = require('clockhook/testing');

async function listening(secret) {
  const server = createReceiver(secret);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: 'http://127.0.0.1:' + server.address().port + '/' };
}

test('takes a signed delivery and refuses a forged one', async () => {
  const { server, url } = await listening(() => 'whsec_test');
  try {
    await sendDelivery(url, { secret: 'whsec_test', type: 'punch.created', expect: 'accepted' });
    await sendDelivery(url, { secret: 'whsec_forged', type: 'punch.created', expect: 'refused' });
  } finally {
    server.close();
  }
});

test('answers a recorded scenario as it was answered', async () => {
  const { server, url } = await listening(() => 'whsec_test');
  try {
    const result = await playScenario('./recorded.scenario.json', url, { secret: 'whsec_test', speed: 'max' });
    assert.deepStrictEqual(result.differences, []);
    assert.deepStrictEqual(result.deliveries.map((d) => d.played.status), [200, 200]);
  } finally {
    server.close();
  }
});

test('takes what the sandbox delivers', async () => {
  let secret = '';
  const { server, url } = await listening(() => secret);
  const sandbox = await startSandbox();
  try {
    ({ secret } = await sandbox.createEndpoint(url));
    const event = await sandbox.trigger('punch.created');
    const delivery = await sandbox.waitForDelivery((d) => d.eventId === event.id);
    assert.strictEqual(delivery.statusCode, 200);
  } finally {
    server.close();
    await sandbox.close();
  }
});
`;

/** A scenario as captures export --format scenario writes one: a delivery and its retry, both taken. */
export const SCENARIO = (() => {
  const body = JSON.stringify({
    id: 'evt_1',
    object: 'event',
    type: 'punch.created',
    api_version: '2026-11-01',
    created: 1_790_000_000,
    data: {},
  });
  const delivery = (at: number, kind: string) => ({
    at,
    method: 'POST',
    path: '/',
    headers: { 'content-type': 'application/json' },
    body,
    bodyEncoding: 'utf8',
    event: { id: 'evt_1', type: 'punch.created', api_version: '2026-11-01', created: 1_790_000_000 },
    kind,
    recorded: { status: 200, outcome: '2xx' },
    capture: `cap_${at}`,
  });
  return JSON.stringify({
    clockhookScenario: 1,
    recordedAt: '2026-11-28T10:00:00.000Z',
    deliveries: [delivery(0, 'first'), delivery(300, 'duplicate')],
  });
})();

/** Starts a program and resolves with the first line `match` accepts, keeping every line. */
export function startLines(command: string, args: string[], cwd: string) {
  const child: ChildProcess = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  const lines: string[] = [];
  let wake = () => {};
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    wake();
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    lines,
    async waitFor(match: (line: string) => boolean, timeoutMs = 60_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no such line from ${command} ${args.join(' ')}; stderr: ${stderr}`);
        await Promise.race([new Promise<void>((r) => (wake = r)), new Promise((r) => setTimeout(r, 200))]);
      }
    },
    stop: () => (child.kill('SIGINT'), exited),
  };
}

/**
 * In an app folder with clockhook installed: `npx clockhook listen` forwards a `trigger` to the app; `more`, given,
 * runs then, with the app's port, while both run.
 */
export async function listenAndTrigger(appDir: string, more?: (port: string) => Promise<void>): Promise<void> {
  await writeFile(join(appDir, 'app.mjs'), APP);
  const app = startLines(process.execPath, ['app.mjs'], appDir);
  const port = (await app.waitFor((l) => l.startsWith('port '))).slice(5);
  // The installed bin itself, as npx runs it: npm exec does not pass a signal on, so it could not be stopped.
  const bin = join(appDir, 'node_modules', '.bin', 'clockhook');
  const listen = startLines(
    bin,
    [
      'listen',
      '--forward-to',
      port,
      '--port',
      '0',
      '--sandbox-port',
      '0',
      '--inspector-port',
      '0',
      '--no-open',
      '--json',
    ],
    appDir,
  );
  try {
    await listen.waitFor((l) => l.includes('"event":"ready"'));
    const { stdout } = await run('npx', ['--no-install', 'clockhook', 'trigger', 'punch.created', '--json'], {
      cwd: appDir,
    });
    const event = JSON.parse(stdout) as { id: string };
    await app.waitFor((l) => l === `delivery ${event.id}`);
    expect(existsSync(join(appDir, '.clockhook', 'captures.json'))).toBe(true);
    await more?.(port);
  } finally {
    await listen.stop();
    await app.stop();
  }
}

/**
 * The app's typed.ts compiles, strict, against clockhook's types as the app resolves them (ESM or CommonJS,
 * as its package.json says).
 */
export async function typechecks(appDir: string): Promise<void> {
  await writeFile(
    join(appDir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        skipLibCheck: true,
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        types: ['node'],
      },
      files: ['typed.ts'],
    }),
  );
  await run(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: appDir });
}

/** A node:test file of the app imports clockhook/testing, and a strict TypeScript file compiles against it. */
export async function usesTestingEntry(appDir: string): Promise<void> {
  await writeFile(
    join(appDir, 'webhooks.test.mjs'),
    `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { sendDelivery, startSandbox } from 'clockhook/testing';

test('clockhook/testing in an app of its own', async () => {
  const server = createServer((req, res) => { req.resume(); req.on('end', () => res.end('ok')); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = 'http://127.0.0.1:' + server.address().port + '/';
  const sandbox = await startSandbox();
  try {
    const { secret } = await sandbox.createEndpoint(url);
    await sendDelivery(url, { secret, expect: 'accepted' });
    const event = await sandbox.trigger('punch.created');
    const delivery = await sandbox.waitForDelivery((d) => d.eventId === event.id);
    assert.equal(delivery.statusCode, 200);
  } finally {
    await sandbox.close();
    server.close();
  }
});
`,
  );
  const { stdout } = await run(process.execPath, ['--test', 'webhooks.test.mjs'], { cwd: appDir });
  expect(stdout).toMatch(/^# pass 1$/m);
  await writeFile(
    join(appDir, 'typed.ts'),
    `import { type Delivery, sendDelivery, signDelivery, startSandbox, type TestSandbox } from 'clockhook/testing';
const signed: { headers: Record<string, string>; body: Buffer } = signDelivery({ body: '{}', secret: 'whsec_x' });
export async function typed(url: string): Promise<number | null> {
  const sandbox: TestSandbox = await startSandbox();
  const result = await sendDelivery(url, { secret: 'whsec_x', type: 'punch.created', expect: 'accepted' });
  const delivery: Delivery = await sandbox.waitForDelivery((d) => d.attempt === 1, { timeout: 1000 });
  await sandbox.close();
  return result.status + signed.body.length + (delivery.statusCode ?? 0);
}
`,
  );
  await typechecks(appDir);
}

/** The packages an app's node_modules holds (each package.json of a package), and their bytes on disk. */
export async function installedSize(appDir: string): Promise<{ packages: number; bytes: number }> {
  const { stdout } = await run('npm', ['ls', '--all', '--parseable'], { cwd: appDir });
  const packages = stdout.trim().split('\n').length - 1; // the app itself first
  const du = await run('du', ['-sb', join(appDir, 'node_modules')]);
  return { packages, bytes: Number(du.stdout.split('\t')[0]) };
}

/** clockhook mcp, as an assistant starts it in the app's folder: its tools listed, a capture got. */
export async function usesMcp(appDir: string, captureId: string): Promise<void> {
  const client = new Client({ name: 'install-test', version: '1.0.0' });
  const bin = join(appDir, 'node_modules', '.bin', 'clockhook');
  await client.connect(new StdioClientTransport({ command: bin, args: ['mcp'], cwd: appDir, stderr: 'pipe' }));
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('get_capture');
    const got = (await client.callTool({ name: 'get_capture', arguments: { id: captureId } })) as unknown as {
      structuredContent: { capture: { id: string } };
    };
    expect(got.structuredContent.capture.id).toBe(captureId);
  } finally {
    await client.close();
  }
}

/**
 * listen --otlp and relay --redis stop with exit 2 and the line that installs their packages; that line, run,
 * makes them work: the relay then reaches for Redis (none on port 1), and listen's ready lines say where spans go.
 */
export async function optionalFeatures(appDir: string): Promise<void> {
  const clockhook = (...args: string[]) =>
    run(join(appDir, 'node_modules', '.bin', 'clockhook'), args, { cwd: appDir, timeout: 60_000 }).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
  const listenArgs = ['listen', '--port', '0', '--sandbox-port', '0', '--inspector-port', '0', '--no-open'];
  const tracing = await clockhook(...listenArgs, '--otlp', 'http://127.0.0.1:1');
  const relay = await clockhook('relay', '--redis', 'redis://127.0.0.1:1', '--port', '0');
  const lines = [];
  for (const [said, needs] of [
    [tracing, /^clockhook: Tracing \(--otlp[^)]*\) needs 5 packages, .*: (npm i -D .*)$/m],
    [relay, /^clockhook: A relay on Redis \(--redis\) needs @redis\/client, .*: (npm i -D .*)$/m],
  ] as const) {
    expect(said).toMatchObject({ code: 2 });
    lines.push(said.stderr.match(needs)![1]);
  }
  for (const line of lines) await run('sh', ['-c', `${line} --no-audit --no-fund --prefer-offline`], { cwd: appDir });
  expect((await clockhook('relay', '--redis', 'redis://127.0.0.1:1', '--port', '0')).stderr).toMatch(
    /could not reach Redis at redis:\/\/127\.0\.0\.1:1/,
  );
  const traced = startLines(
    join(appDir, 'node_modules', '.bin', 'clockhook'),
    [...listenArgs, '--otlp', 'http://127.0.0.1:1'],
    appDir,
  );
  try {
    await traced.waitFor((l) => l.startsWith("Tracing: each delivery's spans go to http://127.0.0.1:1/v1/traces"));
  } finally {
    await traced.stop();
  }
}
