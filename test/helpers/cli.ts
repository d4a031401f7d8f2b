import { stripVTControlCharacters } from 'node:util';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach } from 'vitest';
import { tempDir } from './sandbox.js';

export const BIN = fileURLToPath(new URL('../../bin/clockhook.js', import.meta.url));

/** Environment without the user's clockhook settings, so tests never reach a real service. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: 'true', NO_COLOR: '1' };
  // FORCE_COLOR too: a test that wants colours asks for them (`env`).
  for (const name of ['CLOCKHOOK_API_KEY', 'CLOCKHOOK_API_BASE', 'CLOCKHOOK_SECRET', 'CLOCKHOOK_DB', 'FORCE_COLOR'])
    delete env[name];
  return { ...env, ...extra };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a short command to completion; `input`, when given, is its standard input. */
export function runCli(
  args: string[],
  { cwd, env = {}, input }: { cwd: string; env?: Record<string, string>; input?: string },
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: cleanEnv(env), timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/**
 * A long-running command (listen, sandbox, relay) with --json: collects its NDJSON lines and lets a
 * test wait for the line it expects.
 */
export function spawnCli(args: string[], { cwd, env = {} }: { cwd: string; env?: Record<string, string> }) {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: any[] = [];
  let stderr = '';
  let buffer = '';
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of [...listeners]) listener();
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline = buffer.indexOf('\n');
    while (newline !== -1) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.trim()) {
        try {
          lines.push(JSON.parse(line));
        } catch {
          lines.push({ text: line }); // output for people
        }
      }
      newline = buffer.indexOf('\n');
    }
    notify();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    notify();
  });
  const exited = new Promise<number>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))),
  );
  exited.then(notify);
  let exitCode: number | undefined;
  exited.then((code) => {
    exitCode = code;
  });

  function waitForLine(match: (line: any) => boolean, timeoutMs = 15_000): Promise<any> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = lines.find(match);
        if (found) {
          cleanup();
          resolve(found);
        } else if (exitCode !== undefined) {
          cleanup();
          reject(
            new Error(
              `process exited ${exitCode} before the expected line. stderr:\n${stderr}\nlines:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `timed out waiting for a line. stderr:\n${stderr}\nlines:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  }

  return {
    child,
    lines,
    get stderr() {
      return stderr;
    },
    exited,
    waitForLine,
    /** Sends a signal and waits for the exit code. */
    async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number> {
      if (exitCode === undefined) child.kill(signal);
      return exited;
    },
  };
}

export type SpawnedCli = ReturnType<typeof spawnCli>;

/**
 * For a test file of CLI processes: a fresh folder for each test (`path`), and the processes a test
 * started (pushed to `procs`), killed after it before the folder goes. Call once, at the file's top level.
 */
export function folderPerTest(): { readonly path: string; procs: SpawnedCli[] } {
  let dir: { path: string; remove: () => Promise<void> } | undefined;
  const procs: SpawnedCli[] = [];
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(async () => {
    for (const proc of procs.splice(0)) await proc.stop('SIGKILL');
    await dir?.remove();
  });
  return {
    get path() {
      if (!dir) throw new Error('folderPerTest: the folder exists only while a test runs');
      return dir.path;
    },
    procs,
  };
}

/** The URL on a ready line of a listen for people (`Listening   http://…`, `Inspector   http://…`), without its colour. */
export async function urlOnLine(proc: SpawnedCli, label: RegExp): Promise<string> {
  const line = await proc.waitForLine((l) => label.test(l.text ?? ''), 30_000);
  return stripVTControlCharacters(line.text as string).match(/http\S+/)![0];
}
