import { readFile, unlink } from 'node:fs/promises';
import { folderFiles } from './files.js';
import { isProcessAlive } from './lock.js';
import { writePrivateFile } from './private-files.js';

/** `.clockhook/sandbox.json`: how other commands in the same folder find a running sandbox. */
export interface SandboxDiscovery {
  apiBase: string;
  apiKey: string;
  account: string;
  pid: number;
  /** The sandbox's `--time-scale` (its retry delays are the contract's times this); 1 when absent. */
  timeScale?: number;
}

export const DEFAULT_DISCOVERY_PATH = folderFiles().sandbox;

export function writeDiscovery(path: string, info: SandboxDiscovery): Promise<void> {
  return writePrivateFile(path, `${JSON.stringify(info, null, 2)}\n`);
}

/** Removes the file only if it still names this process (a newer sandbox may have replaced it). */
export async function removeDiscovery(path: string, pid = process.pid): Promise<void> {
  const current = await readDiscoveryFile(path);
  if (current?.pid === pid) await unlink(path).catch(() => {});
}

export async function readDiscoveryFile(path: string): Promise<SandboxDiscovery | null> {
  try {
    const info = JSON.parse(await readFile(path, 'utf8')) as SandboxDiscovery;
    if (!(typeof info.apiBase === 'string' && typeof info.apiKey === 'string' && Number.isInteger(info.pid)))
      return null;
    // Written by a sandbox of an earlier version, or by hand: the contract's delays.
    if (!(typeof info.timeScale === 'number' && info.timeScale > 0 && Number.isFinite(info.timeScale)))
      delete info.timeScale;
    return info;
  } catch {
    return null;
  }
}

/** The running sandbox of this folder, or null; a file left by a process that is gone is ignored. */
export async function findRunningSandbox(path = DEFAULT_DISCOVERY_PATH): Promise<SandboxDiscovery | null> {
  const info = await readDiscoveryFile(path);
  return info && isProcessAlive(info.pid) ? info : null;
}
