import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run when missing), driven by playwright-core. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}

/** The folder where browser tests leave screenshots. */
export async function outputDir(): Promise<string> {
  const dir = fileURLToPath(new URL('../../test-results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  return dir;
}
