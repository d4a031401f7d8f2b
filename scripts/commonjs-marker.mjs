// The CommonJS build (tsconfig.cjs.json) lives in dist/cjs/ of a "type": "module" package: this marks its
// .js files as CommonJS, for the `require` condition of the package's exports (docs/testing.md).
import { mkdir, readFile, writeFile } from 'node:fs/promises';

const marker = new URL('../dist/cjs/package.json', import.meta.url);
const text = '{ "type": "commonjs" }\n';
await mkdir(new URL('../dist/cjs/', import.meta.url), { recursive: true });
// Written only when it is not there: a build while tests run leaves their files alone.
if ((await readFile(marker, 'utf8').catch(() => null)) !== text) await writeFile(marker, text);
