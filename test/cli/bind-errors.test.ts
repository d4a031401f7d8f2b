import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/sandbox.js';

let dir: { path: string; remove: () => Promise<void> };
let holder: Server;
let taken: number;
beforeEach(async () => {
  dir = await tempDir();
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  taken = (holder.address() as { port: number }).port;
});
afterEach(async () => {
  await new Promise((resolve) => holder.close(resolve));
  await dir.remove();
});

const commands: Record<string, string[]> = {
  listen: ['listen', '--inspector-port', '0', '--sandbox-port', '0', '--no-open'],
  sandbox: ['sandbox'],
  relay: ['relay'],
};

// A server that cannot listen is said for people (what failed, what to do), never a stack trace.
describe('long-running commands that cannot listen say why', () => {
  for (const [name, args] of Object.entries(commands)) {
    it(`${name}: a port in use`, async () => {
      const res = await runCli([...args, '--host', '127.0.0.1', '--port', String(taken)], { cwd: dir.path });
      expect(res.code).toBe(1);
      // The holder is this test's own process; the port offered is one that was free a moment ago.
      const said = new RegExp(
        `^clockhook: port ${taken} on 127\\.0\\.0\\.1 is in use by pid ${process.pid} \\(.*node.*\\)\\. Stop it, or pick another: --port (\\d+) \\(free now\\) or --port 0 \\(any free port\\)\\.\n$`,
      );
      expect(res.stderr).toMatch(said);
      expect(Number(said.exec(res.stderr)?.[1])).toBeGreaterThan(taken);
    });

    it(`${name}: an address that is not this machine's`, async () => {
      const res = await runCli([...args, '--host', '999.1.1.1', '--port', '0'], { cwd: dir.path });
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(
        /^clockhook: cannot listen on 999\.1\.1\.1 \(ENOTFOUND\): it is not an address of this machine\. Use --host 127\.0\.0\.1/,
      );
      expect(res.stderr).not.toMatch(/\n\s+at /);
    });
  }

  // The default port is one a developer's own listen often holds: the message names it and a port to use.
  it('listen: the default port taken', async () => {
    const own = createServer();
    const ours = await new Promise<boolean>((resolve) => {
      own.once('error', () => resolve(false)); // held already (by the developer's own listen): just as good
      own.listen(4300, '127.0.0.1', () => resolve(true));
    });
    try {
      const res = await runCli(commands.listen, { cwd: dir.path });
      expect(res.code).toBe(1);
      const holder = ours ? `pid ${process.pid} \\(.*node.*\\)` : 'pid \\d+ \\(.+\\)';
      expect(res.stderr).toMatch(
        new RegExp(
          `^clockhook: port 4300 on 127\\.0\\.0\\.1 is in use by ${holder}\\. Stop it, or pick another: --port \\d+ \\(free now\\) or --port 0 \\(any free port\\)\\.\n$`,
        ),
      );
    } finally {
      if (ours) await new Promise((resolve) => own.close(resolve));
    }
  });

  it('listen: an IP address another machine has', async () => {
    const res = await runCli([...commands.listen, '--host', '192.0.2.1', '--port', '0'], { cwd: dir.path });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^clockhook: cannot listen on 192\.0\.2\.1 \(EADDRNOTAVAIL\)/);
  });
});

describe('listen and sandbox that cannot write their files say why', () => {
  it('names a path that runs through a file', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${dir.path}/notes.txt`, 'not a folder');
    const res = await runCli([...commands.listen, '--port', '0', '--db', 'notes.txt/captures.json'], { cwd: dir.path });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      'clockhook: cannot write notes.txt: part of that path is a file, not a folder. Give a path under a folder (the store can go elsewhere with --db).\n',
    );
    const deeper = await runCli(
      [...commands.listen, '--port', '0', '--db', `${dir.path}/notes.txt/sub/captures.json`],
      { cwd: dir.path },
    );
    expect(deeper.code).toBe(1);
    expect(deeper.stderr).toBe(
      `clockhook: cannot write ${dir.path}/notes.txt/sub: part of that path is a file, not a folder. Give a path under a folder (the store can go elsewhere with --db).\n`,
    );
  });

  it('sandbox: names a path that runs through a file, as listen does', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${dir.path}/notes.txt`, 'not a folder');
    const res = await runCli([...commands.sandbox, '--port', '0', '--db', 'notes.txt/sandbox-db.json'], {
      cwd: dir.path,
    });
    expect(res).toMatchObject({
      code: 1,
      stderr:
        'clockhook: cannot write notes.txt: part of that path is a file, not a folder. Give a path under a folder (the state can go elsewhere with --db).\n',
    });
  });

  // Node's own recursive mkdir never returns there: listen used to hang before it was ready.
  it.skipIf(!existsSync('/proc/self'))('a path under /proc, where no folder can be made, at once', async () => {
    for (const [name, whose] of [
      ['listen', 'the store'],
      ['sandbox', 'the state'],
    ]) {
      const res = await runCli([...commands[name], '--port', '0', '--db', '/proc/clockhook-test/a/db.json'], {
        cwd: dir.path,
      });
      expect(res, name).toMatchObject({
        code: 1,
        stderr: `clockhook: cannot write /proc/clockhook-test: no folder can be made there. Run in a folder you can write to (${whose} can go elsewhere with --db).\n`,
      });
    }
  });
});
