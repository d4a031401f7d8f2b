// The subjects the benchmark loads: the app, a bare http-proxy (B), clockhook listen (C), relay + listen (D),
// two relays on Redis (E), each a process of its own, with what it reports after its rounds.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { procStatus, spawnJson } from '../helpers/clockhook-process.mjs';
import { mib, settle } from './load.mjs';
import { fullStore, SECRET } from './traffic.mjs';

function listen(server, port = 0) {
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server.address().port)));
}

export async function startApp() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  server.keepAliveTimeout = 60_000;
  return {
    url: `http://127.0.0.1:${await listen(server)}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  };
}

/** The bare proxy (and the floor) run in a process of their own, as the listener does: the same footing for all. */
async function startProxyScript(script, args) {
  const child = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url)), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise((resolve) =>
    child.stdout.once('data', (data) => resolve(Number(String(data).trim()))),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    close: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill();
      }),
  };
}

/** A clockhook command with --json, counting the deliveries it answered 2xx (`bin`: see spawnJson). */
export function spawnClockhook(args, cwd, nodeArgs = [], bin = undefined) {
  let deliveries = 0;
  const proc = spawnJson(
    args,
    cwd,
    (line) => {
      if (line.event === 'delivery' && line.status >= 200 && line.status < 300) deliveries += 1;
    },
    { nodeArgs, bin },
  );
  return {
    ...proc,
    get deliveries() {
      return deliveries;
    },
  };
}

const CAPTURE_PREFIX = Buffer.from('{"type":"capture",');

/** One inspector page's worth of WebSocket, receiving every capture. */
export async function connectInspector(inspectorUrl) {
  const url = new URL(inspectorUrl);
  const socket = new WebSocket(`ws://${url.host}/ws?token=${url.searchParams.get('token')}`);
  let captures = 0;
  let actions = 0;
  let snapshotAt = 0;
  const opened = performance.now();
  const snapshot = new Promise((resolve) => {
    socket.on('message', (data) => {
      // A real page parses in its own process; this one shares a core with autocannon and the app,
      // so a capture is only counted (by its prefix, which the server always writes first).
      if (data.subarray(0, CAPTURE_PREFIX.length).equals(CAPTURE_PREFIX)) {
        captures += 1;
        return;
      }
      const message = JSON.parse(String(data));
      if (message.type === 'snapshot' && !snapshotAt) {
        snapshotAt = performance.now();
        resolve(message);
      }
    });
  });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  /** Sends an action as the page does and waits for its result. */
  const act = (action) =>
    new Promise((resolve, reject) => {
      const id = `bench-${++actions}`;
      const onMessage = (data) => {
        if (data.subarray(0, CAPTURE_PREFIX.length).equals(CAPTURE_PREFIX)) return;
        const message = JSON.parse(String(data));
        if (message.type !== 'result' || message.id !== id) return;
        socket.off('message', onMessage);
        if (message.ok) resolve(message.data);
        else reject(new Error(`inspector ${action.type}: ${message.error.message}`));
      };
      socket.on('message', onMessage);
      socket.send(JSON.stringify({ ...action, id }));
    });
  return {
    socket,
    act,
    snapshot,
    snapshotMs: async () => {
      await snapshot;
      return snapshotAt - opened;
    },
    get captures() {
      return captures;
    },
  };
}

export async function folder() {
  const dir = await mkdtemp(join(tmpdir(), 'clockhook-bench-'));
  return dir;
}

/** B: a bare http-proxy in its own process. */
export async function proxySubject(app, mode) {
  const proxy = await startProxyScript('./bare-proxy.mjs', [app.url, mode]);
  return {
    url: proxy.url,
    secret: SECRET,
    pids: [proxy.pid],
    report: async (result) => ({ ...result, listenerPeakRssMiB: mib(await procStatus(proxy.pid, 'VmHWM')) }),
    close: () => proxy.close(),
  };
}

/**
 * F: the floor, the least that keeps listen's promise (see floor-proxy.mjs), its journal in a folder of its own.
 * BENCH_FLOOR=least: its copy that does even less (docs/performance-notes.md, "Is F the least there is?").
 */
export async function floorSubject(app) {
  const dir = await folder();
  const mode = process.env.BENCH_FLOOR === 'least' ? ['least'] : [];
  const proxy = await startProxyScript('./floor-proxy.mjs', [app.url, join(dir, 'journal.ndjson'), SECRET, ...mode]);
  return {
    url: proxy.url,
    secret: SECRET,
    pids: [proxy.pid],
    report: async (result) => ({ ...result, listenerPeakRssMiB: mib(await procStatus(proxy.pid, 'VmHWM')) }),
    async close() {
      await proxy.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * C: clockhook listen with one inspector page connected, receiving every capture; `traffic`, what it is sent
 * (see trafficRequests). `emptyEachRound`:
 * the store is cleared (the page's Clear) before each round, so that an "empty" store is one, and not
 * full from its third round on (10,000 captures is two rounds' worth). `bin`: another checkout's listen (see
 * spawnJson).
 */
export async function listenSubject(
  app,
  {
    maxCaptures = 1000,
    prefill = 0,
    emptyEachRound = false,
    args = [],
    traffic = 'unique',
    nodeArgs = [],
    page = true,
    bin = undefined,
  } = {},
) {
  const dir = await folder();
  if (prefill) await fullStore(dir, prefill);
  const listenProc = spawnClockhook(
    [
      'listen',
      '--json',
      '--port',
      '0',
      '--inspector-port',
      '0',
      '--secret',
      SECRET,
      '--forward-to',
      app.url,
      '--max-captures',
      String(maxCaptures),
      '--no-open',
      ...(page ? [] : ['--no-inspector']),
      ...args,
    ],
    dir,
    nodeArgs,
    bin,
  );
  const ready = await listenProc.ready;
  const inspector = page ? await connectInspector(ready.inspector) : { socket: { close() {} }, captures: Infinity };
  await inspector.snapshot;
  return {
    url: ready.listener,
    secret: SECRET,
    traffic,
    pids: [listenProc.child.pid],
    beforeRound: emptyEachRound ? () => inspector.act({ type: 'clear' }) : undefined,
    async report(result) {
      await settle(() => listenProc.deliveries >= result.total && inspector.captures >= result.total);
      return {
        ...result,
        listenerPeakRssMiB: mib(await procStatus(listenProc.child.pid, 'VmHWM')),
        answeredByListener: listenProc.deliveries,
        inspectorMessages: inspector.captures,
      };
    },
    async close() {
      inspector.socket.close();
      await listenProc.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * listen --relay `relayUrl` with one inspector page connected, as a subject: requests go to its public URL,
 * or to `entry` in its place (another relay instance); `stop` ends what it was started with, after it.
 */
async function relayedListen(app, dir, relayUrl, { pids, entry, stop }) {
  const listenProc = spawnClockhook(
    ['listen', '--json', '--port', '0', '--inspector-port', '0', '--sandbox-port', '0'].concat([
      '--relay',
      relayUrl,
      '--forward-to',
      app.url,
      '--print-secret',
      '--no-open',
    ]),
    dir,
  );
  const ready = await listenProc.ready;
  const inspector = await connectInspector(ready.inspector);
  await inspector.snapshot;
  return {
    url: entry ? ready.publicUrl.replace(relayUrl, entry) : ready.publicUrl,
    secret: ready.secret,
    pids: [listenProc.child.pid, ...pids],
    async report(result) {
      await settle(() => listenProc.deliveries >= result.total);
      return {
        ...result,
        listenerPeakRssMiB: mib(await procStatus(listenProc.child.pid, 'VmHWM')),
        answeredByListener: listenProc.deliveries,
      };
    },
    async close() {
      inspector.socket.close();
      await listenProc.stop();
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** D: clockhook relay + listen --relay (embedded sandbox, inspector page connected); `nodeArgs`, the relay's. */
export async function relaySubject(app, { nodeArgs = [] } = {}) {
  const dir = await folder();
  const relay = spawnClockhook(['relay', '--json', '--port', '0', '--host', '127.0.0.1'], dir, nodeArgs);
  const relayReady = await relay.ready;
  return relayedListen(app, dir, relayReady.url, { pids: [relay.child.pid], stop: () => relay.stop() });
}

/** A redis-server on a free port, without persistence, for E. */
export async function startRedisServer() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`redis-server exited ${code}: ${output}`)));
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGKILL');
      }),
  };
}

/**
 * E: two relay instances on one Redis + listen --relay on instance A; the load goes to instance B, so
 * every request and answer travels between the instances over Redis.
 */
export async function redisRelaySubject(app) {
  const dir = await folder();
  const redis = await startRedisServer();
  const relayArgs = ['relay', '--json', '--port', '0', '--host', '127.0.0.1', '--redis', redis.url];
  const relayA = spawnClockhook(relayArgs, dir);
  const relayB = spawnClockhook(relayArgs, dir);
  const [readyA, readyB] = await Promise.all([relayA.ready, relayB.ready]);
  return relayedListen(app, dir, readyA.url, {
    entry: readyB.url,
    pids: [relayA.child.pid, relayB.child.pid, redis.pid],
    stop: async () => {
      await Promise.all([relayA.stop(), relayB.stop()]);
      await redis.stop();
    },
  });
}
