import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FolderKeeper, writePrivateFile } from '../../src/folder/index.js';
import { recordingLogger } from '../helpers/logger.js';
import { tempDir } from '../helpers/sandbox.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
let state: string;
let keeper: FolderKeeper | undefined;
beforeEach(async () => {
  dir = await tempDir();
  state = join(dir.path, '.clockhook');
});
afterEach(async () => {
  await keeper?.stop();
  await dir.remove();
});

/** A file a part keeps, written with `text` when the keeper asks. */
function keptFile(name: string, text = name) {
  const path = join(state, name);
  return { what: name, paths: [path], write: () => writePrivateFile(path, text) };
}

describe("the .clockhook folder's keeper", () => {
  it('writes back a file deleted alone, and everything once the folder is gone, in one line', async () => {
    const logger = recordingLogger();
    keeper = new FolderKeeper({ dir: state, logger, intervalMs: 3_600_000 });
    const own: string[] = [];
    for (const kept of [keptFile('a.json'), keptFile('b.json')]) {
      await kept.write();
      keeper.keep(kept);
    }
    // Kept only with the whole folder (endpoints.json: one deleted alone may be on purpose).
    const withFolder = { what: 'c.json', paths: [], write: () => writePrivateFile(join(state, 'c.json'), 'c') };
    keeper.keep(withFolder);
    keeper.watch(async () => void own.push('looked'));
    await rm(join(state, 'a.json'));
    await keeper.look();
    expect(existsSync(join(state, 'a.json'))).toBe(true);
    expect(logger.warnings).toEqual([`Wrote back what clockhook keeps in ${state}: a.json.`]);
    await rm(state, { recursive: true, force: true });
    await keeper.look();
    expect(['a.json', 'b.json', 'c.json', '.gitignore'].filter((f) => !existsSync(join(state, f)))).toEqual([]);
    expect(logger.warnings.at(-1)).toBe(`Wrote back what clockhook keeps in ${state}: a.json, b.json, c.json.`);
    // A part's own look ran at each look, first.
    expect(own).toEqual(['looked', 'looked']);
  });

  it('says a file it cannot write back once, not at every look, and says it again once it can', async () => {
    const logger = recordingLogger();
    keeper = new FolderKeeper({ dir: state, logger, intervalMs: 3_600_000 });
    let full = true;
    const path = join(state, 'listen.json');
    keeper.keep({
      what: 'listen.json',
      paths: [path],
      write: async () => {
        if (full) throw new Error('ENOSPC: no space left on device');
        await writeFile(path, '{}');
      },
    });
    await writePrivateFile(join(state, 'other'), '');
    for (let look = 0; look < 3; look++) await keeper.look();
    expect(logger.warnings).toEqual([
      `Could not write back listen.json: ENOSPC: no space left on device (tried again every second).`,
    ]);
    full = false;
    await keeper.look();
    expect(logger.warnings.at(-1)).toBe(`Wrote back what clockhook keeps in ${state}: listen.json.`);
  });

  it('stops only once a look under way is done, and can be stopped twice', async () => {
    keeper = new FolderKeeper({ dir: state, logger: recordingLogger(), intervalMs: 20 });
    let finish: (() => void) | null = null;
    keeper.watch(() => new Promise<void>((resolve) => (finish = resolve)));
    await expect.poll(() => finish !== null).toBe(true);
    const order: string[] = [];
    const stopped = keeper.stop().then(() => order.push('stopped'));
    await new Promise(setImmediate); // every promise that could settle without the look has
    order.push('look done');
    (finish as unknown as () => void)();
    await stopped;
    expect(order).toEqual(['look done', 'stopped']);
    await keeper.stop();
  });
});
