import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv, folderPerTest } from '../helpers/cli.js';
import { postSigned, readSettledCaptures, startListenProcess } from '../helpers/listen.js';
import { envelopeBody } from '../helpers/delivery.js';

const dir = folderPerTest();
const { procs } = dir;

/** A command whose stdout is a pipe nobody reads any more (`… | head -0`): its exit code and stderr. */
function runWithClosedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir.path,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

// `clockhook listen --json | head -1`, or a `jq` that exited: writing to the pipe fails with EPIPE.
describe('when what reads its output goes away', () => {
  it('listen goes on answering and capturing every delivery, says so once, and stops cleanly', async () => {
    const proc = await startListenProcess(['--print-secret'], dir.path);
    procs.push(proc);
    proc.child.stdout?.destroy();
    const secret = proc.ready.secret as string;
    for (const n of [1, 2, 3]) {
      const body = envelopeBody(`evt_closed_${n}`);
      expect((await postSigned(proc.ready.listener, body, secret)).status).toBe(200);
      // Each delivery's line is written after its answer: give it time to fail before the next.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expect
      .poll(() => proc.stderr)
      .toContain(
        'clockhook: standard output is closed (EPIPE: what read it has exited); listen goes on without it. Stop it with Ctrl-C.',
      );
    expect(proc.stderr.match(/standard output is closed/g)).toHaveLength(1);
    expect((await readSettledCaptures(dir.path)).map((c) => c.envelope?.id)).toEqual([
      'evt_closed_1',
      'evt_closed_2',
      'evt_closed_3',
    ]);

    // A one-shot command ends as it would have, and says nothing (as `git log | head -1` does).
    expect(await runWithClosedStdout(['events', 'list'])).toEqual({ code: 0, stderr: '' });

    expect(await proc.stop()).toBe(0);
  });

  it('listen goes on with stderr closed too, where it has nowhere left to say so', async () => {
    const proc = await startListenProcess(['--print-secret'], dir.path);
    procs.push(proc);
    proc.child.stdout?.destroy();
    proc.child.stderr?.destroy();
    const secret = proc.ready.secret as string;
    for (const n of [1, 2]) {
      const body = envelopeBody(`evt_mute_${n}`);
      expect((await postSigned(proc.ready.listener, body, secret)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await readSettledCaptures(dir.path)).map((c) => c.envelope?.id)).toEqual(['evt_mute_1', 'evt_mute_2']);
    expect(await proc.stop()).toBe(0);
  });
});
