// listen with the embedded sandbox: the secrets it keeps on file, and what it says of them.
import { execFileSync } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/contract/index.js';
import { startRelayServer } from '../../src/relay/index.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { readEndpointRecords } from '../helpers/listen.js';
import { portForRestarts } from '../helpers/ports.js';
import { app, dir, folderSandbox, listen, procs, useListenFolder } from './folder-rig.js';

useListenFolder();

describe('listen and the secrets on file', () => {
  it('names another endpoint it kept that reaches this listener too, which would get every event a second time, with the command that deletes it', async () => {
    await folderSandbox();
    const relay = await startRelayServer({ port: 0, host: '127.0.0.1' });
    try {
      const port = String(await portForRestarts());
      // The relay's endpoint, made by a run on another port; then this port's own.
      const elsewhere = await listen('--relay', relay.url);
      expect(await elsewhere.stop('SIGINT')).toBe(0);
      const direct = await listen('--port', port);
      expect(direct.stderr).not.toContain('reaches this listener too');
      expect(await direct.stop('SIGINT')).toBe(0);
      // Through the relay on this port, the relay URL's endpoint is used, and this port's still delivers here.
      const both = await listen('--port', port, '--relay', relay.url);
      expect(both.ready.endpointId).toBe(elsewhere.ready.endpointId);
      await expect
        .poll(() => both.stderr)
        .toContain(
          `Endpoint ${direct.ready.endpointId} (http://127.0.0.1:${port}/) was kept by an earlier listen, and reaches this listener too: this folder's sandbox sends it every event as well as endpoint ${both.ready.endpointId}, so each comes here twice, and that copy, signed with its own secret, fails and is retried. If your app verifies with endpoint ${both.ready.endpointId}'s secret: npx clockhook endpoints delete ${direct.ready.endpointId}`,
        );
    } finally {
      await relay.close();
    }
  });

  it('says so for people when the secret stays', async () => {
    await folderSandbox();
    const port = String(await portForRestarts());
    const proc = spawnCli(['listen', '--port', port, '--sandbox-port', '0', '--inspector-port', '0', '--no-open'], {
      cwd: dir.path,
    });
    procs.push(proc);
    const line = await proc.waitForLine((l) => /^\s*Secret /.test(l.text ?? ''));
    expect(line.text).toMatch(/Secret {6}whsec_…\S{4} \(the same on the next run; npx clockhook secret prints it\)/);
  });

  it('says why a secret from the environment leaves the sandbox off, on its ready line and to trigger', async () => {
    const proc = spawnCli(['listen', '--port', '0', '--inspector-port', '0', '--no-open'], {
      cwd: dir.path,
      env: { CLOCKHOOK_SECRET: 'whsec_from_the_environment' },
    });
    procs.push(proc);
    const line = await proc.waitForLine((l) => /^\s*API /.test(l.text ?? ''));
    expect(line.text).toMatch(
      /API {9}none \(offline: \$CLOCKHOOK_SECRET gives the secret, so no sandbox is started and trigger has nothing to ask; without it, listen starts one\)/,
    );
    await proc.waitForLine((l) => /^\s*Inspector /.test(l.text ?? ''));
    const trigger = await runCli(['trigger', 'punch.created'], { cwd: dir.path });
    expect(trigger.code).toBe(1);
    expect(trigger.stderr).toContain('the listen running in this folder is offline: it was given a secret');
  });

  it('tells the app whose secret it refuses how to get the right one whole, without stopping listen', async () => {
    app.setResponder((_r, res) => res.writeHead(401).end('bad signature'));
    const proc = await listen('--forward-to', app.url, '--port', '0');
    await runCli(['trigger', 'punch.created'], { cwd: dir.path });
    await proc.waitForLine((l) => l.event === 'delivery' && l.status === 401);
    await expect
      .poll(() => proc.stderr)
      .toMatch(
        /it may verify with another secret than clockhook, which used whsec_…\S{4} \("npx clockhook secret" prints it whole\)/,
      );
    const printed = await runCli(['secret'], { cwd: dir.path });
    expect(printed.code).toBe(0);
    const [delivery] = app.received;
    const header = delivery.headers['x-service-signature'] as string;
    expect(verifySignature({ header, payload: delivery.body, secret: printed.stdout.trim() })).toMatchObject({
      ok: true,
    });
  });

  it('names the endpoint in the command that prints its secret when several are on file', async () => {
    await folderSandbox();
    const earlier = await listen('--keep-endpoint', '--port', '0');
    expect(await earlier.stop('SIGINT')).toBe(0);
    app.setResponder((_r, res) => res.writeHead(401).end('bad signature'));
    const proc = spawnCli(['listen', '--forward-to', app.url, '--port', '0', '--inspector-port', '0', '--no-open'], {
      cwd: dir.path,
    });
    procs.push(proc);
    const endpoint = await proc.waitForLine((l) => /^\s*Endpoint /.test(l.text ?? ''));
    const id = /Endpoint\s+(\d+)/.exec(endpoint.text ?? '')?.[1] ?? 'no id';
    expect(id).not.toBe(String(earlier.ready.endpointId));
    const secret = await proc.waitForLine((l) => /^\s*Secret /.test(l.text ?? ''));
    expect(secret.text).toMatch(new RegExp(`Secret {6}whsec_…\\S{4} \\(npx clockhook secret ${id} prints it\\)`));
    await runCli(['trigger', 'punch.created'], { cwd: dir.path });
    await expect.poll(() => proc.stderr).toContain(`"npx clockhook secret ${id}" prints it whole`);
    const printed = await runCli(['secret', id], { cwd: dir.path });
    expect(printed.code).toBe(0);
    const [delivery] = app.received;
    expect(
      verifySignature({
        header: delivery.headers['x-service-signature'] as string,
        payload: delivery.body,
        secret: printed.stdout.trim(),
      }),
    ).toMatchObject({ ok: true });
  });

  it('keeps it with --keep-endpoint and reuses it (secret on file) on the next run', async () => {
    const { client } = await folderSandbox();
    const first = await listen('--keep-endpoint', '--port', '0');
    expect(await first.stop('SIGTERM')).toBe(0);
    expect((await client.listEndpoints()).data).toHaveLength(1);
    const records = await readEndpointRecords(dir.path);
    expect(records).toEqual([
      expect.objectContaining({ id: first.ready.endpointId, secret: expect.stringMatching(/^whsec_/) }),
    ]);
    expect((await stat(join(dir.path, '.clockhook', 'endpoints.json'))).mode & 0o777).toBe(0o600);
  });

  it('keeps its folder out of git: .clockhook/ ignores itself, secrets and captures included', async () => {
    execFileSync('git', ['init', '-q'], { cwd: dir.path });
    const proc = await listen('--keep-endpoint', '--port', '0');
    await runCli(['trigger', 'punch.created'], { cwd: dir.path });
    await proc.waitForLine((l) => l.event === 'delivery');
    expect(await proc.stop('SIGINT')).toBe(0);
    expect(await readdir(join(dir.path, '.clockhook'))).toEqual(
      expect.arrayContaining(['.gitignore', 'endpoints.json', 'captures.json', 'sandbox-db.json']),
    );
    expect(
      execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: dir.path, encoding: 'utf8' }),
    ).toBe('');
    expect((await stat(join(dir.path, '.clockhook', '.gitignore'))).mode & 0o777).toBe(0o600);
    // A file of the project's own beside it is seen as ever.
    await writeFile(join(dir.path, 'app.js'), '');
    expect(
      execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: dir.path, encoding: 'utf8' }),
    ).toBe('?? app.js\n');
  });

  it('after a crash, reuses the endpoint whose secret is on file', async () => {
    const { client } = await folderSandbox();
    // A fixed free port, so the second run registers the same URL.
    const port = await portForRestarts();
    const first = await listen('--port', String(port));
    await first.stop('SIGKILL');
    const second = await listen('--port', String(port));
    expect(second.ready.endpointId).toBe(first.ready.endpointId);
    expect((await client.listEndpoints()).data).toHaveLength(1);
    // And it verifies with the secret on file.
    await runCli(['trigger', 'shift.published'], { cwd: dir.path });
    expect(await second.waitForLine((l) => l.event === 'delivery')).toMatchObject({ signature: 'valid', status: 200 });
  });

  it('refuses to start over a records file it cannot read, which it would otherwise overwrite with new secrets', async () => {
    const { client } = await folderSandbox();
    const port = String(await portForRestarts());
    const first = await listen('--port', port);
    expect(await first.stop('SIGINT')).toBe(0);
    const path = join(dir.path, '.clockhook', 'endpoints.json');
    const broken = `${(await readFile(path, 'utf8')).trimEnd().slice(0, -1)},\n]\n`; // a trailing comma, by hand
    await writeFile(path, broken);
    const res = await runCli(
      ['listen', '--json', '--port', port, '--sandbox-port', '0', '--inspector-port', '0', '--no-open'],
      { cwd: dir.path },
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot read .clockhook/endpoints.json (it is not valid JSON: `);
    expect(res.stderr).toContain(
      'mend it, or move it aside, and listen then registers new endpoints, with new secrets for your app.',
    );
    expect(await readFile(path, 'utf8')).toBe(broken);
    expect((await client.listEndpoints()).data.map((e) => e.id)).toEqual([first.ready.endpointId]);
    const secret = await runCli(['secret'], { cwd: dir.path });
    expect(secret.code).toBe(1);
    expect(secret.stderr).toContain('cannot read .clockhook/endpoints.json (it is not valid JSON: ');
  });

  it('deletes and recreates an earlier endpoint of its own whose secret is not on file', async () => {
    const { client } = await folderSandbox();
    const port = String(await portForRestarts()); // the second run registers the same URL
    const proc = await listen('--keep-endpoint', '--port', port);
    await proc.stop('SIGKILL');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir.path, '.clockhook', 'endpoints.json'), '[]');
    const again = await listen('--port', port);
    expect(again.ready.endpointId).not.toBe(proc.ready.endpointId);
    expect((await client.listEndpoints()).data.map((e) => e.id)).toEqual([again.ready.endpointId]);
    expect(again.stderr).toContain(`Deleting endpoint ${proc.ready.endpointId}`);
  });
});
