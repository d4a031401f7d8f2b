// `.clockhook/inspector-token`: the page's token, kept so that an open page reconnects after a restart.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writePrivateFile } from './private-files.js';

/** The token on file, or a new one (256 random bits) written there. */
export async function loadOrCreateToken(path: string): Promise<string> {
  const existing = (await readFile(path, 'utf8').catch(() => '')).trim();
  if (/^[A-Za-z0-9_-]{32,}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  await writeToken(path, token);
  return token;
}

export const writeToken = (path: string, token: string): Promise<void> => writePrivateFile(path, `${token}\n`);
