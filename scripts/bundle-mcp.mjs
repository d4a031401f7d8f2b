// After tsc: bundles src/mcp/sdk.ts (the MCP SDK's stdio server and zod, as clockhook mcp uses them) into
// dist/mcp/sdk.js, in place of tsc's re-exports, so that the package needs neither at run time (they are dev
// dependencies). Their licence notices go beside it, in dist/mcp/sdk.licenses.txt. docs/performance-notes.md says what
// it does to the install and to `clockhook mcp`'s start.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const result = await build({
  entryPoints: [join(root, 'src/mcp/sdk.ts')],
  outfile: join(root, 'dist/mcp/sdk.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  write: false,
});
// Written only when it changed: a build while tests run (npm pack's prepare, say) leaves their files alone.
const writeChanged = async (path, text) => {
  if ((await readFile(path, 'utf8').catch(() => null)) !== text) await writeFile(path, text);
};
for (const file of result.outputFiles) await writeChanged(file.path, file.text);

/** Each package bundled (its innermost node_modules folder), with its licence text. */
const folders = new Set(
  Object.keys(result.metafile.inputs)
    .map((input) => /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1])
    .filter(Boolean),
);
const notices = [];
for (const folder of [...folders].sort()) {
  const { name, version, license } = JSON.parse(await readFile(join(root, folder, 'package.json'), 'utf8'));
  const text = await readFile(join(root, folder, 'LICENSE'), 'utf8').catch(() => `${license} licence`);
  notices.push(`${name}@${version} (${license})\n\n${text.trim()}\n`);
}
await writeChanged(
  join(root, 'dist/mcp/sdk.licenses.txt'),
  `dist/mcp/sdk.js bundles these packages:\n\n${notices.join('\n---\n\n')}`,
);
