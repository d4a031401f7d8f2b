import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { folderPerTest, spawnCli, type SpawnedCli } from '../helpers/cli.js';

const PROBE = fileURLToPath(new URL('../fixtures/signal-probe.mjs', import.meta.url));

const dir = folderPerTest();
const { procs } = dir;

async function stderrLine(proc: SpawnedCli, pattern: RegExp, timeoutMs = 5_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = proc.stderr.split('\n').find((l) => pattern.test(l));
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no stderr line like ${pattern}; stderr:\n${proc.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// A script that starts a command, waits for "ready" and stops it at once must get the clean stop
// (listen deletes the endpoint it made): the signal handlers must be in place before "ready" is out.
describe('long-running commands handle SIGTERM, SIGINT and SIGHUP from the moment they say ready', () => {
  const commands: [string, string[]][] = [
    ['listen', ['listen', '--port', '0', '--inspector-port', '0', '--sandbox-port', '0', '--no-open']],
    ['listen --json', ['listen', '--json', '--port', '0', '--inspector-port', '0', '--sandbox-port', '0', '--no-open']],
    ['sandbox', ['sandbox', '--port', '0']],
    ['sandbox --json', ['sandbox', '--json', '--port', '0']],
    ['relay', ['relay', '--port', '0']],
    ['relay --json', ['relay', '--json', '--port', '0']],
  ];
  for (const [name, args] of commands) {
    it(name, async () => {
      const proc = spawnCli(args, { cwd: dir.path, env: { NODE_OPTIONS: `--import=${PROBE}` } });
      procs.push(proc);
      await proc.waitForLine((l) => l.event === 'ready' || /ready/.test(l.text ?? ''));
      expect(await stderrLine(proc, /^probe: /)).toBe('probe: at ready SIGTERM=1 SIGINT=1 SIGHUP=1');
      expect(await proc.stop('SIGTERM')).toBe(0);
    });
  }
});
