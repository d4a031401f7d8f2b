import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { portForRestarts } from './ports.js';

export const REDIS_SERVER = '/usr/bin/redis-server';

/**
 * A real redis-server on a free port, without persistence (`--save ''`, no AOF), as `.ci/run` installs
 * it. `stop` and `start` again keep the port, for the tests of a Redis that goes away and comes back.
 */
export async function startRedis(): Promise<{
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops (SIGSTOP) or resumes (SIGCONT) the server: its connections stay open, unanswered. */
  freeze(frozen: boolean): void;
}> {
  const port = await portForRestarts();
  let child: ChildProcess | null = null;
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
      const proc = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      let output = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 15_000);
      proc.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited ${code}:\n${output}`));
      });
    });
  const stop = async () => {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  };
  const freeze = (frozen: boolean) => {
    (child as ChildProcess | null)?.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, stop, freeze };
}

/**
 * A small round-robin TCP balancer, as a team puts in front of its relay instances (test code, not
 * product code): each connection goes to the next upstream, or to the one after when that one refuses.
 * `upstreams` may be changed while it runs; `picked` counts the connections each upstream got.
 */
export async function startBalancer(upstreams: number[]): Promise<{
  url: string;
  upstreams: number[];
  picked: Map<number, number>;
  close(): Promise<void>;
}> {
  let next = 0;
  const picked = new Map<number, number>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    const attempt = (tries: number) => {
      if (tries >= state.upstreams.length) return client.destroy();
      const port = state.upstreams[next++ % state.upstreams.length];
      const upstream = connect(port, '127.0.0.1');
      let connected = false;
      upstream.on('error', () => (connected ? client.destroy() : attempt(tries + 1)));
      upstream.once('connect', () => {
        connected = true;
        picked.set(port, (picked.get(port) ?? 0) + 1);
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        client.pipe(upstream).pipe(client);
        client.resume();
        client.on('error', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const state = {
    url: `http://127.0.0.1:${port}`,
    upstreams,
    picked,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return state;
}
