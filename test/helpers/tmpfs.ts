import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A small tmpfs (2 MiB unless said): real ENOSPC and EROFS, no mocks. Needs root (as CI and the dev machines have); null when mounting is not allowed. */
export function mountTiny(size = '2m'): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'clockhook-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

export function unmount(dir: string): void {
  execFileSync('umount', ['-l', dir]);
  rmSync(dir, { recursive: true, force: true });
}

/** Whether this machine lets the tests mount a tmpfs; a suite that needs one says so when it cannot, and is skipped. */
export const canMount = (() => {
  const dir = mountTiny();
  if (!dir) {
    console.warn('Skipping the full-disk tests: mounting a tmpfs is not allowed here (they need root).');
    return false;
  }
  unmount(dir);
  return true;
})();

/** Fills the disk holding `dir` with filler files, to the last bytes it takes. */
export function fill(dir: string): void {
  const chunk = Buffer.alloc(64 * 1024, 'f');
  for (let i = 0; ; i++) {
    try {
      writeFileSync(join(dir, `filler-${i}`), chunk);
    } catch {
      // a last partial chunk may remain; the disk is full now
      try {
        writeFileSync(join(dir, 'filler-tail'), Buffer.alloc(512, 'f'));
      } catch {}
      return;
    }
  }
}

/** Deletes filler files: `count` of them (64 KiB each), or all. */
export function unfill(dir: string, count = Number.POSITIVE_INFINITY): void {
  const fillers = readdirSync(dir).filter((name) => name.startsWith('filler-'));
  for (const name of fillers.slice(0, count)) unlinkSync(join(dir, name));
}
