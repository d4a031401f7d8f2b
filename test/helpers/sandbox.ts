import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AttemptReport, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';

export async function tempDir(prefix = 'clockhook-'): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** A sandbox of `folder` on port 0, as `clockhook sandbox` run there makes one: the commands run there find it. */
export function startFolderSandbox(folder: string, options: SandboxOptions = {}) {
  return startSandbox({
    port: 0,
    dbPath: join(folder, '.clockhook', 'sandbox-db.json'),
    discoveryPath: join(folder, '.clockhook', 'sandbox.json'),
    ...options,
  });
}

/** A sandbox on port 0 in its own temp folder, recording every attempt report. */
export async function startTestSandbox(options: SandboxOptions = {}) {
  const dir = await tempDir('clockhook-sandbox-');
  const attempts: AttemptReport[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const sandbox = await startSandbox({
    port: 0,
    dbPath: join(dir.path, 'sandbox-db.json'),
    discoveryPath: null,
    ...options,
    onAttempt: (report) => {
      attempts.push(report);
      options.onAttempt?.(report);
      for (const waiter of waiters.filter((w) => attempts.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
  });

  /** A raw call, returning status, headers and parsed body (no client-side retries). */
  async function call(
    method: string,
    path: string,
    {
      body,
      key = sandbox.apiKey,
      headers = {},
    }: { body?: unknown; key?: string | null; headers?: Record<string, string> } = {},
  ) {
    const response = await fetch(sandbox.apiBase + path, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    const json: any = text ? JSON.parse(text) : undefined;
    return { status: response.status, headers: response.headers, body: json };
  }

  /** Resolves with every attempt report once `count` have arrived. */
  function waitForAttempts(count: number, timeoutMs = 10_000): Promise<AttemptReport[]> {
    if (attempts.length >= count) return Promise.resolve(attempts);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${attempts.length} of ${count} attempts in ${timeoutMs} ms`)),
        timeoutMs,
      );
      waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(attempts);
        },
      });
    });
  }

  return {
    sandbox,
    dir: dir.path,
    attempts,
    call,
    waitForAttempts,
    async close() {
      await sandbox.close();
      await dir.remove();
    },
  };
}

export type TestSandbox = Awaited<ReturnType<typeof startTestSandbox>>;
