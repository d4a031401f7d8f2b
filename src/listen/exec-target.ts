// `listen --exec <command>`: a command as the app. listen forwards to a small server of its own on 127.0.0.1 that
// runs the command once per delivery: the raw body on its stdin; the event's type, id and attempt and the
// signature header in its environment (with the secret, as the app would have it). Exit 0 is the app's 200 (its
// stdout the answer's body); any other exit its 500, with the end of its stderr as the body; the receiver's
// time-out kills it. So a delivery to a command is verified, captured, forwarded, told and replayable as any.
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The most of a command's output kept for its answer (the service keeps 4,000 characters of a body). */
const KEPT = 4_000;

export interface ExecTargetOptions {
  command: string;
  /** Environment for each run (the secret under the app's name for it). */
  env: Record<string, string>;
  /** The receiver's time-out: a run still going then is killed. */
  timeoutMs: number;
  /** How many runs at once; the rest wait their turn. @default 4 */
  concurrency?: number;
  /** The attempt a delivery is (1 for the first; `replay` for a replay), by its event id, as listen decided it. */
  attemptOf?: (eventId: string | null) => string;
  /** Each line a run writes, for listen's terminal. */
  onLine?: (line: string) => void;
}

function envelopeOf(body: Buffer): { id: string | null; type: string | null } {
  try {
    const value = JSON.parse(body.toString('utf8')) as { id?: unknown; type?: unknown };
    const text = (field: unknown) => (typeof field === 'string' ? field : null);
    return { id: text(value?.id), type: text(value?.type) };
  } catch {
    return { id: null, type: null };
  }
}

/** The end of what a run wrote, at most KEPT characters. */
const tail = (text: string) => (text.length > KEPT ? `…${text.slice(-KEPT)}` : text);

export async function startExecTarget(options: ExecTargetOptions): Promise<{ url: URL; close(): Promise<void> }> {
  const { concurrency = 4 } = options;
  let running = 0;
  const waiting: (() => void)[] = [];
  const turn = async () => {
    if (running >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
  };
  const done = () => {
    running -= 1;
    waiting.shift()?.();
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void turn().then(() => run(options, req, res, Buffer.concat(chunks)).finally(done));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One run of the command for one delivery, answered as the app would answer. */
function run(options: ExecTargetOptions, req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
  const envelope = envelopeOf(body);
  const signature = req.headers['x-service-signature'];
  const env = {
    ...process.env,
    ...options.env,
    CLOCKHOOK_EVENT_TYPE: envelope.type ?? '',
    CLOCKHOOK_EVENT_ID: envelope.id ?? '',
    CLOCKHOOK_ATTEMPT: options.attemptOf?.(envelope.id) ?? '1',
    CLOCKHOOK_SIGNATURE: typeof signature === 'string' ? signature : '',
  };
  const child = spawn(options.command, { shell: true, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    if (stream === 'stdout') stdout = tail(stdout + text);
    else stderr = tail(stderr + text);
    for (const line of text.split('\n')) if (line.trim()) options.onLine?.(line);
  };
  child.stdout.on('data', collect('stdout'));
  child.stderr.on('data', collect('stderr'));
  child.stdin.on('error', () => {}); // a command that does not read its stdin
  child.stdin.end(body);
  const kill = () => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  };
  // The receiver's time-out, and a forward that gave up (listen stopping): the run is killed.
  const timer = setTimeout(kill, options.timeoutMs);
  res.on('close', () => {
    if (child.exitCode === null && child.signalCode === null) kill();
  });
  return new Promise((resolve) => {
    const answer = (status: number, text: string) => {
      clearTimeout(timer);
      if (!res.writableEnded && !res.destroyed)
        res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
      resolve();
    };
    child.once('error', (error) => answer(500, `${options.command} could not run: ${error.message}`));
    child.once('close', (code, signal) => {
      if (code === 0) return answer(200, stdout);
      const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
      answer(500, stderr.trim() ? stderr : `${options.command} ${how}`);
    });
  });
}
