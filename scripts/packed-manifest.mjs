// npm pack's prepack and postpack: the packed package.json carries no install script. `prepare` builds a clone
// (npm install, npm ci) and a git-URL install, which need it; a tarball or registry install does not, and npm warns
// of any install script it finds there. `strip` keeps package.json aside and takes `prepare` out; `restore` puts
// it back as it was.
import { readFile, rename, writeFile } from 'node:fs/promises';

const manifest = new URL('../package.json', import.meta.url);
const kept = new URL('../package.json.unpacked', import.meta.url);

if (process.argv[2] === 'strip') {
  // A pack that failed before its postpack left the whole manifest aside: it is the one to keep.
  const text = await readFile(kept, 'utf8').catch(() => readFile(manifest, 'utf8'));
  await writeFile(kept, text);
  const pkg = JSON.parse(text);
  delete pkg.scripts.prepare;
  await writeFile(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (process.argv[2] === 'restore') {
  await rename(kept, manifest).catch((error) => {
    if (error.code !== 'ENOENT') throw error; // nothing was stripped
  });
} else {
  throw new Error('node scripts/packed-manifest.mjs strip|restore');
}
