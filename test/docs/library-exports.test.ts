import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// The package entry exports the fixed interface of DESIGN.md and what docs/library.md adds on purpose: every
// name it exports is in the docs' import line, and every name there is exported (ES modules and CommonJS).
const FIXED = ['signPayload', 'verifySignature', 'EVENT_TYPES', 'ApiClient', 'ApiError'];

async function documented(): Promise<string[]> {
  const docs = await readFile(new URL('../../docs/library.md', import.meta.url), 'utf8');
  const line = /import \{([^}]*)\} from 'clockhook';/.exec(docs);
  expect(line, "docs/library.md imports from 'clockhook'").not.toBeNull();
  return (line as RegExpExecArray)[1].split(',').map((name) => name.trim());
}

describe('the package entry', () => {
  it('exports what docs/library.md names, and nothing else, the fixed interface among it', async () => {
    const names = await documented();
    const esm = Object.keys(await import('../../dist/index.js')).sort();
    const cjs = Object.keys(createRequire(import.meta.url)('../../dist/cjs/index.js') as object)
      .filter((name) => name !== '__esModule')
      .sort();
    expect(esm).toEqual([...names].sort());
    expect(cjs).toEqual(esm);
    expect(names).toEqual(expect.arrayContaining(FIXED));
  });
});
