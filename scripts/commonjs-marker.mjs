// The CommonJS build (tsconfig.cjs.json) lives in dist/cjs/ of a "type": "module" package: this marks its
// .js files as CommonJS, for the `require` condition of the package's exports (docs/testing.md).
import { mkdir, writeFile } from 'node:fs/promises';

await mkdir(new URL('../dist/cjs/', import.meta.url), { recursive: true });
await writeFile(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
