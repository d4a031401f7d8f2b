import { SECRET, signedHeaders } from './delivery.js';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { silentLogger } from '../../src/logger.js';
import type { Capture } from '../../src/store/index.js';
import { JournalAdapter } from '../../src/store/journal.js';
import { spawnCli } from './cli.js';

/** Reads the capture store the way the listener does (snapshot + journal), without taking its lock. */
export async function readCaptures(dir: string, file = join(dir, '.clockhook', 'captures.json')): Promise<Capture[]> {
  const data = await new JournalAdapter(file, {
    logger: silentLogger,
    compactAfterBytes: Number.POSITIVE_INFINITY,
    now: Date.now,
  }).read();
  return data?.captures ?? [];
}

/** The endpoint records listen wrote in the folder `dir` (`.clockhook/endpoints.json`), as they are on disk. */
export async function readEndpointRecords(dir: string): Promise<Record<string, any>[]> {
  return JSON.parse(await readFile(join(dir, '.clockhook', 'endpoints.json'), 'utf8'));
}

/** `clockhook listen --json` as a child process in `cwd`, resolved once its ready line is out. */
export async function startListenProcess(args: string[], cwd: string, env: Record<string, string> = {}) {
  const proc = spawnCli(
    ['listen', '--json', '--port', '0', '--sandbox-port', '0', '--inspector-port', '0', '--no-open', ...args],
    { cwd, env },
  );
  const ready = await proc.waitForLine((line) => line.event === 'ready');
  // Not a spread: that would freeze the live `stderr` getter at this moment.
  return Object.assign(proc, { ready });
}

/** POSTs bytes with node:http (which, unlike fetch, sends any header, Connection included). */
export function post(url: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Headers; text: string }>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (typeof value === 'string') responseHeaders.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers: responseHeaders, text: Buffer.concat(chunks).toString() });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** POSTs a body with the X-Service-Signature the service would send for it, signed with `secret`. */
export function postSigned(
  url: string,
  body: string | Buffer,
  secret: string = SECRET,
  headers: Record<string, string> = {},
) {
  return post(url, body, { ...signedHeaders(body, { secret }), ...headers });
}

/** The stored captures once every forwarded one has its result on disk (it is written lazily, within 50 ms). */
export async function readSettledCaptures(dir: string, timeoutMs = 5000): Promise<Capture[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const captures = await readCaptures(dir);
    if (captures.every((c) => c.rejected !== null || c.forward !== undefined) || Date.now() > deadline) return captures;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
