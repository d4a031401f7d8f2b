import { readFileSync } from 'node:fs';

/** clockhook's version, from its package.json (HAR files and `--version` name it). */
// Read rather than imported: JSON modules still print an ExperimentalWarning on Node 20.
export const packageVersion = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
