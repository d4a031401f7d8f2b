import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CaptureStore } from '../../src/store/index.js';
import { sampleCapture } from '../helpers/capture.js';
import { recordingLogger } from '../helpers/logger.js';
import { tempDir } from '../helpers/sandbox.js';

let dir: { path: string; remove: () => Promise<void> };
let path: string;
let store: CaptureStore;
const logger = recordingLogger();
beforeEach(async () => {
  dir = await tempDir();
  path = join(dir.path, '.clockhook', 'captures.json');
  // A guard that never looks on its own in these tests: what they see is the fsync's look.
  store = await CaptureStore.open({ path, logger, guardIntervalMs: 3_600_000 });
  await store.add(sampleCapture('evt_guarded'));
});
afterEach(async () => {
  await store.close();
  await dir.remove();
});

describe('the store guard, at each fsync', () => {
  // An `rm -rf .clockhook` that met the files made again after it removed the journal leaves the folder
  // ("Directory not empty") with the new journal, but without the lock and `.gitignore` it had listed.
  it('takes the lock and writes .gitignore again before a capture is acknowledged without them', async () => {
    await rm(`${path}.lock`);
    await rm(join(dir.path, '.clockhook', '.gitignore'));
    await store.add(sampleCapture('evt_guarded'));
    expect(await readFile(`${path}.lock`, 'utf8')).toBe(String(process.pid));
    expect(await readFile(join(dir.path, '.clockhook', '.gitignore'), 'utf8')).toMatch(/^\*$/m);
    expect(logger.warnings.join('\n')).toMatch(
      /its lock .*captures\.json\.lock was deleted while listen runs: took it again/,
    );
  });

  it('writes .gitignore again alone, keeping the lock it holds', async () => {
    await rm(join(dir.path, '.clockhook', '.gitignore'));
    await store.add(sampleCapture('evt_guarded'));
    expect(await readFile(join(dir.path, '.clockhook', '.gitignore'), 'utf8')).toMatch(/^\*$/m);
  });

  it('makes the folder again and writes the store back when the journal went with it', async () => {
    await rm(join(dir.path, '.clockhook'), { recursive: true });
    await store.add(sampleCapture('evt_guarded'));
    expect(await readFile(`${path}.lock`, 'utf8')).toBe(String(process.pid));
    const reopened = (await readFile(path, 'utf8')) + (await readFile(`${path}.journal`, 'utf8').catch(() => ''));
    expect(reopened.match(/"cap_/g)?.length).toBeGreaterThanOrEqual(2);
  });

  it('refuses only while it cannot make the folder again, and takes the next capture once it can', async () => {
    const folder = join(dir.path, '.clockhook');
    await rm(folder, { recursive: true });
    await writeFile(folder, 'a file where the folder was'); // mkdir cannot make it: not for now
    await expect(store.add(sampleCapture('evt_refused'))).rejects.toThrow();
    await rm(folder);
    // At the next fsync, not after the next look (an hour away here): nothing of the failure is kept.
    await store.add(sampleCapture('evt_taken'));
    expect(await readFile(`${path}.lock`, 'utf8')).toBe(String(process.pid));
  });
});
