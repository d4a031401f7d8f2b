import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRunningSandbox } from '../../src/folder/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';
import { recordingLogger } from '../helpers/logger.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function folder() {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  return {
    dbPath: join(dir.path, '.clockhook', 'sandbox-db.json'),
    discoveryPath: join(dir.path, '.clockhook', 'sandbox.json'),
    dir: dir.path,
  };
}

const auth = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

describe('sandbox state and discovery', () => {
  it('keeps accounts, keys, endpoints and events across a restart', async () => {
    const paths = await folder();
    const first = await startSandbox({ port: 0, ...paths });
    const created = await fetch(`${first.apiBase}/webhookEndpoint`, {
      method: 'POST',
      headers: auth(first.apiKey),
      body: JSON.stringify({ url: 'https://e.com/h', enabledEvents: ['*'] }),
    }).then((r) => r.json() as Promise<{ id: number }>);
    await first.close();

    const second = await startSandbox({ port: 0, ...paths });
    cleanups.push(second.close);
    expect(second.apiKey).toBe(first.apiKey);
    const got = await fetch(`${second.apiBase}/webhookEndpoint/${created.id}`, { headers: auth(second.apiKey) });
    expect(got.status).toBe(200);
  });

  it('writes the state 0600 in a 0700 folder', async () => {
    const paths = await folder();
    const sandbox = await startSandbox({ port: 0, ...paths });
    cleanups.push(sandbox.close);
    expect((await stat(paths.dbPath)).mode & 0o777).toBe(0o600);
    expect((await stat(paths.discoveryPath)).mode & 0o777).toBe(0o600);
    expect((await stat(join(paths.dir, '.clockhook'))).mode & 0o777).toBe(0o700);
  });

  it('writes the discovery file while running and removes it on close; close twice is safe', async () => {
    const paths = await folder();
    const sandbox = await startSandbox({ port: 0, ...paths });
    const info = JSON.parse(await readFile(paths.discoveryPath, 'utf8'));
    expect(info).toEqual({
      apiBase: sandbox.apiBase,
      apiKey: sandbox.apiKey,
      account: sandbox.account,
      pid: process.pid,
      timeScale: 1,
    });
    expect(await findRunningSandbox(paths.discoveryPath)).toEqual(info);
    await sandbox.close();
    await sandbox.close();
    expect(await findRunningSandbox(paths.discoveryPath)).toBeNull();
    await expect(stat(paths.discoveryPath)).rejects.toThrow(/ENOENT/);
  });

  it("reads a discovery file without a usable time scale as the contract's times", async () => {
    const paths = await folder();
    await mkdir(join(paths.dir, '.clockhook'), { recursive: true });
    const fields = { apiBase: 'http://127.0.0.1:4302', apiKey: 'tt_live_x', account: 'acct_default', pid: process.pid };
    for (const timeScale of [undefined, -1, 0, 'fast', null]) {
      await writeFile(paths.discoveryPath, JSON.stringify({ ...fields, timeScale }));
      expect(await findRunningSandbox(paths.discoveryPath)).toEqual(fields);
    }
    await writeFile(paths.discoveryPath, JSON.stringify({ ...fields, timeScale: 0.01 }));
    expect(await findRunningSandbox(paths.discoveryPath)).toEqual({ ...fields, timeScale: 0.01 });
  });

  it('ignores a discovery file whose pid is gone', async () => {
    const paths = await folder();
    const sandbox = await startSandbox({ port: 0, ...paths, discoveryPath: null });
    cleanups.push(sandbox.close);
    await writeFile(
      paths.discoveryPath,
      JSON.stringify({ apiBase: sandbox.apiBase, apiKey: sandbox.apiKey, account: 'a', pid: 2 ** 22 + 1 }),
    );
    expect(await findRunningSandbox(paths.discoveryPath)).toBeNull();
  });

  it('moves a corrupt state file aside, warns naming both paths, and starts', async () => {
    const paths = await folder();
    const logger = recordingLogger();
    const { warnings } = logger;
    const first = await startSandbox({ port: 0, ...paths });
    await first.close();
    await writeFile(paths.dbPath, '{"version":1,"endpoints":[tru');
    const sandbox = await startSandbox({ port: 0, ...paths, logger });
    cleanups.push(sandbox.close);
    const files = await readdir(join(paths.dir, '.clockhook'));
    const aside = files.find((f) => f.startsWith('sandbox-db.json.corrupt-'));
    expect(aside).toBeDefined();
    expect(await readFile(join(paths.dir, '.clockhook', aside as string), 'utf8')).toBe(
      '{"version":1,"endpoints":[tru',
    );
    expect(warnings.join('\n')).toContain(paths.dbPath);
    expect(warnings.join('\n')).toContain(aside);
  });

  it('refuses a state file that is not its own, or a folder, leaving it as it was', async () => {
    const paths = await folder();
    const foreign = join(paths.dir, 'package.json');
    await writeFile(foreign, '{"name":"my-app"}');
    await expect(startSandbox({ port: 0, ...paths, dbPath: foreign })).rejects.toThrow(
      `${foreign} is not a clockhook sandbox state: it does not begin as clockhook writes one, so it is left as it is.`,
    );
    expect(await readFile(foreign, 'utf8')).toBe('{"name":"my-app"}');
    await expect(startSandbox({ port: 0, ...paths, dbPath: paths.dir })).rejects.toThrow(
      `${paths.dir} is a folder, not a file. Give --db a file path, such as ${join(paths.dir, 'sandbox-db.json')}.`,
    );
    expect((await readdir(paths.dir)).filter((name) => name !== '.clockhook')).toEqual(['package.json']);
  });

  it('resumes pending retries after a restart', async () => {
    const paths = await folder();
    let calls = 0;
    const app = await startReceiver((_r, res) => {
      res.writeHead(++calls === 1 ? 500 : 200);
      res.end();
    });
    cleanups.push(app.close);
    // 1 min → 600 ms: time enough to stop it before the retry however busy the machine (60 ms is a race).
    let first = await startSandbox({ port: 0, ...paths, timeScale: 0.01 });
    const headers = auth(first.apiKey);
    await fetch(`${first.apiBase}/webhookEndpoint`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: app.url, enabledEvents: ['*'] }),
    });
    await fetch(`${first.apiBase}/sandbox/events`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ type: 'punch.created' }),
    });
    await app.waitFor(1);
    await first.close(); // the retry, 600 ms away, has not run
    expect(app.received).toHaveLength(1);
    first = await startSandbox({ port: 0, ...paths, timeScale: 0.001 });
    cleanups.push(first.close);
    await app.waitFor(2);
    expect(app.received).toHaveLength(2);
  });

  it("refuses a second sandbox on the same state, which would undo the first one's writes, naming the running one", async () => {
    const paths = await folder();
    const first = await startSandbox({ port: 0, ...paths });
    const headers = auth(first.apiKey);
    await fetch(`${first.apiBase}/webhookEndpoint`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: 'https://e.com/kept', enabledEvents: ['*'] }),
    });
    await expect(startSandbox({ port: 0, ...paths })).rejects.toThrow(
      `${paths.dbPath} is in use by the sandbox running at ${first.apiBase} (pid ${process.pid}), which the other commands in this folder use. Stop that one first, or give this one its own state with --db.`,
    );
    // Without the discovery file to name it (deleted by hand), it is another sandbox, and the lock's pid may
    // be another program's by now (a crash, then the pid reused): what to do then is said too.
    const { rm } = await import('node:fs/promises');
    await rm(paths.discoveryPath);
    await expect(startSandbox({ port: 0, ...paths })).rejects.toThrow(
      `${paths.dbPath} is in use by another sandbox (pid ${process.pid}: a clockhook sandbox, or the one clockhook listen runs when none is running). Stop that one first, or give this one its own state with --db. (If none runs, pid ${process.pid} is another program's now: delete ${paths.dbPath}.lock.)`,
    );
    // Its own --db is another state, and allowed.
    const apart = await startSandbox({ port: 0, dbPath: join(paths.dir, 'other-db.json'), discoveryPath: null });
    await apart.close();
    // A start that fails once it holds the lock (its port taken) leaves none behind.
    await first.close();
    const taken = await startReceiver((_r, res) => res.end());
    cleanups.push(taken.close);
    await expect(startSandbox({ ...paths, port: Number(new URL(taken.url).port) })).rejects.toThrow(/EADDRINUSE/);
    const second = await startSandbox({ port: 0, ...paths });
    cleanups.push(second.close);
    const listed = await fetch(`${second.apiBase}/webhookEndpoint`, { headers: auth(second.apiKey) }).then(
      (r) => r.json() as Promise<{ data: { url: string }[] }>,
    );
    expect(listed.data.map((e) => e.url)).toEqual(['https://e.com/kept']);
  });

  it('refuses a bad time scale or api version with a message that says what is expected', async () => {
    const paths = await folder();
    await expect(startSandbox({ port: 0, ...paths, timeScale: 0 })).rejects.toThrow(/positive number/);
    await expect(startSandbox({ port: 0, ...paths, apiVersion: 'v2' })).rejects.toThrow(/YYYY-MM-DD/);
    await expect(startSandbox({ port: 0, ...paths, apiVersion: '2026-13-45' })).rejects.toThrow(/YYYY-MM-DD/);
    const leapDay = await startSandbox({ port: 0, ...paths, apiVersion: '2028-02-29' });
    cleanups.push(leapDay.close);
    expect(leapDay.apiBase).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});
