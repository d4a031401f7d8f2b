import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionFiles } from '../../src/listen/restore.js';
import type { Setup } from '../../src/listen/options.js';
import { recordingLogger } from '../helpers/logger.js';
import { tempDir } from '../helpers/sandbox.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir?.remove());

describe('writing back what listen keeps', () => {
  it('says a file it cannot write back once, not at every look, and says it again once it can', async () => {
    const logger = recordingLogger();
    let full = true;
    const setup = {
      logger,
      stateDir: dir.path,
      restorers: [
        {
          what: 'listen.json',
          paths: [join(dir.path, 'listen.json')],
          write: async () => {
            if (full) throw new Error('ENOSPC: no space left on device');
          },
        },
      ],
    } as unknown as Setup;
    const files = new SessionFiles(setup);
    for (let look = 0; look < 3; look++) await files.restore(false);
    expect(logger.warnings).toEqual([
      `Could not write back listen.json: ENOSPC: no space left on device (tried again every second).`,
    ]);
    full = false;
    await files.restore(false);
    expect(logger.warnings.at(-1)).toBe(`Wrote back what listen keeps in ${dir.path}: listen.json.`);
  });
});
