// What the store's test files share: each test a folder of its own, and the path of a store in its .clockhook
// folder there. `dir` and `path` are live bindings, set anew before each test of a file that called useStoreFolder().
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { tempDir } from '../helpers/sandbox.js';

export let dir: { path: string; remove: () => Promise<void> };
export let path: string;

export function useStoreFolder(): void {
  beforeEach(async () => {
    dir = await tempDir();
    path = join(dir.path, '.clockhook', 'captures.json');
  });
  afterEach(() => dir.remove());
}
