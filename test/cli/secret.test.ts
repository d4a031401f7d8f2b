import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/sandbox.js';

const SANDBOX = 'http://127.0.0.1:4302';
const SERVICE = 'https://api.example.com';
const record = (id: number, url: string, secret: string, apiBase = SANDBOX) => ({
  apiBase,
  url,
  id,
  secret,
  createdAt: '2026-11-22T00:00:00.000Z',
});

let dir: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => dir.remove());

async function onFile(...records: ReturnType<typeof record>[]) {
  await mkdir(join(dir.path, '.clockhook'));
  await writeFile(join(dir.path, '.clockhook', 'endpoints.json'), JSON.stringify(records));
}
const secret = (...args: string[]) => runCli(['secret', ...args], { cwd: dir.path });

describe('clockhook secret', () => {
  it('prints the one secret on file alone on stdout, for $(…), and names its endpoint on stderr', async () => {
    await onFile(record(1, 'http://127.0.0.1:4300/', 'whsec_only_aaaa'));
    const res = await secret();
    expect(res).toMatchObject({ code: 0, stdout: 'whsec_only_aaaa\n' });
    expect(res.stderr).toContain(`The secret of endpoint 1 (http://127.0.0.1:4300/, on ${SANDBOX})`);
    expect(JSON.parse((await secret('--json')).stdout)).toEqual({
      id: 1,
      url: 'http://127.0.0.1:4300/',
      apiBase: SANDBOX,
      secret: 'whsec_only_aaaa',
    });
  });

  it('with several on file, lists them masked and takes one by its id or URL', async () => {
    await onFile(
      record(1, 'http://127.0.0.1:4300/', 'whsec_first_aaaa'),
      record(2, 'https://relay.example.com/c/abc', 'whsec_second_bbbb'),
    );
    const unnamed = await secret();
    expect(unnamed.code).toBe(2);
    expect(unnamed.stdout).toBe('');
    expect(unnamed.stderr).toContain(
      `holds 2 endpoints: endpoint 1 (http://127.0.0.1:4300/, secret whsec_…aaaa) on ${SANDBOX}, endpoint 2 (https://relay.example.com/c/abc, secret whsec_…bbbb) on ${SANDBOX}. Name one by its id or URL: npx clockhook secret <id|url>.`,
    );
    expect(unnamed.stderr).not.toContain('whsec_first');
    expect((await secret('2')).stdout).toBe('whsec_second_bbbb\n');
    expect((await secret('http://127.0.0.1:4300')).stdout).toBe('whsec_first_aaaa\n');
    const unknown = await secret('7');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no endpoint "7" in .clockhook/endpoints.json, which holds endpoint 1');
  });

  it('names the sandbox of a listen run with --sandbox-port 0 as such, not by the port 0 it is filed under', async () => {
    await onFile(
      record(1, 'http://127.0.0.1:4380/', 'whsec_free_port_aaaa', 'http://127.0.0.1:0'),
      record(2, 'https://relay.example.com/c/abc', 'whsec_second_bbbb'),
    );
    const res = await secret();
    expect(res.stderr).toContain(
      "endpoint 1 (http://127.0.0.1:4380/, secret whsec_…aaaa) on this folder's sandbox (--sandbox-port 0), endpoint 2",
    );
    expect((await secret('1')).stderr).toContain(
      "The secret of endpoint 1 (http://127.0.0.1:4380/, on this folder's sandbox (--sandbox-port 0))",
    );
    expect(JSON.parse((await secret('1', '--json')).stdout).apiBase).toBe('http://127.0.0.1:0');
  });

  it('asks for the URL when an id names endpoints on two APIs', async () => {
    await onFile(
      record(1, 'http://127.0.0.1:4300/', 'whsec_sandbox_aaaa'),
      record(1, 'https://hooks.example.com/in', 'whsec_service_bbbb', SERVICE),
    );
    const res = await secret('1');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('"1" names 2 endpoints in .clockhook/endpoints.json');
    expect(res.stderr).toContain('Name one by its URL.');
    expect((await secret('https://hooks.example.com/in')).stdout).toBe('whsec_service_bbbb\n');
  });

  it('refuses a records file whose entries are not what listen wrote, naming the entry', async () => {
    await onFile(record(1, 'http://127.0.0.1:4300/', 'whsec_first_aaaa'), {
      ...record(2, 'http://127.0.0.1:4301/', ''),
      secret: undefined,
    } as unknown as ReturnType<typeof record>);
    const res = await secret('1');
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(
      'cannot read .clockhook/endpoints.json (entry 2 lacks its apiBase, url, id or secret)',
    );
  });

  it('run from a subfolder, says which folder above has the endpoints on file', async () => {
    await onFile(record(1, 'http://127.0.0.1:4300/', 'whsec_above_aaaa'));
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir.path, 'src'));
    const res = await runCli(['secret'], { cwd: join(dir.path, 'src') });
    expect(res).toMatchObject({ code: 1, stdout: '' });
    expect(res.stderr).toBe(
      `clockhook: no endpoint on file in .clockhook/endpoints.json, but ${dir.path} has some: run this there (cd ..), where clockhook listen ran.\n`,
    );
  });

  it('says where a secret comes from when none is on file, exit 1', async () => {
    const res = await secret();
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(
      'no endpoint on file in .clockhook/endpoints.json: clockhook listen registers one the first time it runs in this folder',
    );
  });
});
