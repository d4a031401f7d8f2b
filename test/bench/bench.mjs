// npm run bench: clockhook beside the bare proxy, in one run, on one machine, as ratios (issue 8).
// Plain ESM over dist/ (built by `npm run bench` first), so it runs on Node 20 without a TS loader.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import WebSocket from 'ws';
import { signPayload } from '../../dist/index.js';
import { machineCpu, procCpuMs, procStatus, spawnJson } from '../helpers/clockhook-process.mjs';

const RESULTS = fileURLToPath(new URL('../../bench-results.json', import.meta.url));
const SECRET = 'whsec_bench_secret_0123456789';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const MEMORY_DELIVERIES = Number(process.env.BENCH_MEMORY_DELIVERIES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);

// ---- fixtures -------------------------------------------------------------------------------

function envelopeBody(id = 'evt_bench0001') {
  const data = {
    id: 910001,
    employeeId: 1001,
    type: 'in',
    punchedAt: '2026-11-20T14:00:12Z',
    locationId: 2001,
    note: '',
  };
  const envelope = {
    id,
    object: 'event',
    type: 'punch.created',
    api_version: '2026-11-01',
    created: Math.floor(Date.now() / 1000),
    data,
  };
  const base = JSON.stringify(envelope).length;
  data.note = 'x'.repeat(2048 - base); // a ~2 KB envelope, like a real punch with its relations
  return JSON.stringify(envelope);
}

function signedHeaders(body, secret = SECRET) {
  return {
    'content-type': 'application/json',
    'x-service-event': 'punch.created',
    'x-service-signature': signPayload({ payload: body, secret }),
  };
}

function listen(server, port = 0) {
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server.address().port)));
}

async function startApp() {
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

/** The bare proxy runs in a process of its own, as the listener does: the same footing for both. */
async function startBareProxy(target, mode) {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./bare-proxy.mjs', import.meta.url)), target, mode], {
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

/** A clockhook command with --json, counting the deliveries it answered 2xx. */
function spawnClockhook(args, cwd) {
  let deliveries = 0;
  const proc = spawnJson(args, cwd, (line) => {
    if (line.event === 'delivery' && line.status >= 200 && line.status < 300) deliveries += 1;
  });
  return {
    ...proc,
    get deliveries() {
      return deliveries;
    },
  };
}

const CAPTURE_PREFIX = Buffer.from('{"type":"capture",');

/** One inspector page's worth of WebSocket, receiving every capture. */
async function connectInspector(inspectorUrl) {
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

async function folder() {
  const dir = await mkdtemp(join(tmpdir(), 'clockhook-bench-'));
  return dir;
}

/** A capture file with `count` captures of the bench body, as listen writes them. */
async function fullStore(dir, count) {
  await mkdir(join(dir, '.clockhook'), { recursive: true, mode: 0o700 });
  const body = envelopeBody();
  const headers = signedHeaders(body);
  const start = Date.now() - count * 10;
  const captures = Array.from({ length: count }, (_, i) => ({
    id: `cap_${(start + i * 10).toString(36).padStart(9, '0')}000${i.toString(36).padStart(4, '0')}`,
    receivedAt: new Date(start + i * 10).toISOString(),
    source: 'delivery',
    method: 'POST',
    path: '/',
    headers: { host: '127.0.0.1', ...headers, 'content-length': String(body.length) },
    body: body.replace('evt_bench0001', `evt_old${i}`),
    bodyEncoding: 'utf8',
    bodySize: body.length,
    signature: { status: 'valid', timestamp: Math.floor(start / 1000), ageSeconds: 0 },
    envelope: {
      id: `evt_old${i}`,
      type: 'punch.created',
      api_version: '2026-11-01',
      created: Math.floor(start / 1000),
    },
    contractProblems: [],
    duplicateOf: null,
    rejected: null,
    forward: {
      target: 'http://127.0.0.1:3000/',
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"ok":true}',
      bodyEncoding: 'utf8',
      durationMs: 1,
    },
  }));
  // As the store writes it: one capture per line.
  await writeFile(
    join(dir, '.clockhook', 'captures.json'),
    `{"version":1,"captures":[\n${captures.map((c) => JSON.stringify(c)).join(',\n')}\n]}`,
    { mode: 0o600 },
  );
}

function load(url, body, headers, options = { duration: DURATION }) {
  return new Promise((resolve, reject) => {
    autocannon({ url, method: 'POST', body, headers, connections: CONNECTIONS, ...options }, (error, result) => {
      if (error) reject(error);
      else resolve(result);
    });
  });
}

function figures(result) {
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

// ---- scenarios ------------------------------------------------------------------------------

async function scenarioDirect(app, body) {
  return figures(await load(app.url, body, signedHeaders(body)));
}

/**
 * Figures of one subject over its rounds: throughput and p50 averaged (the rounds are equally
 * long), p99 the worst round's, counts summed; CPU per request over all rounds.
 */
function merge(rounds) {
  const mean = (key) => rounds.reduce((sum, r) => sum + r[key], 0) / rounds.length;
  const sum = (key) => rounds.reduce((total, r) => total + r[key], 0);
  const perRequest = (key) => Math.round((sum(key) * 1000) / sum('total'));
  return {
    requestsPerSecond: Math.round(mean('requestsPerSecond')),
    p50Ms: Math.round(mean('p50Ms') * 10) / 10,
    p99Ms: Math.max(...rounds.map((r) => r.p99Ms)),
    errors: sum('errors'),
    non2xx: sum('non2xx'),
    total: sum('total'),
    forwarderCpuUsPerRequest: perRequest('forwarderCpuMs'),
    loadSideCpuUsPerRequest: perRequest('loadSideCpuMs'),
    machineIdlePercent: Math.round((sum('idleTicks') / sum('allTicks')) * 100),
  };
}

/**
 * One round of load on a subject, with what it cost: the CPU time of the processes that forward
 * (the bare proxy; the listener; the listener and the relay), of this process (load generator, app,
 * inspector client), and how idle the machine was.
 */
async function measuredLoad(subject, body, connections = CONNECTIONS) {
  const forwarderCpu = async () => (await Promise.all(subject.pids.map(procCpuMs))).reduce((a, b) => a + b, 0);
  const [forwarder0, self0, machine0] = [await forwarderCpu(), process.cpuUsage(), await machineCpu()];
  const result = figures(
    await load(subject.url, body, signedHeaders(body, subject.secret), { duration: DURATION / ROUNDS, connections }),
  );
  const [forwarder1, self, machine1] = [await forwarderCpu(), process.cpuUsage(self0), await machineCpu()];
  return {
    ...result,
    forwarderCpuMs: forwarder1 - forwarder0,
    loadSideCpuMs: (self.user + self.system) / 1000,
    idleTicks: machine1.idle - machine0.idle,
    allTicks: machine1.total - machine0.total,
  };
}

/**
 * Loads the subjects in turns, ROUNDS rounds of DURATION / ROUNDS seconds each, so that subjects
 * compared as a ratio share the machine's good and bad moments (this VM's speed drifts by ±20 %
 * within minutes); then each reports its figures and is stopped.
 */
async function interleaved(body, subjects, connections = CONNECTIONS) {
  const rounds = subjects.map(() => []);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, subject] of subjects.entries()) {
        await subject.beforeRound?.();
        rounds[i].push(await measuredLoad(subject, body, connections));
      }
    }
    const rows = [];
    for (const [i, subject] of subjects.entries()) rows.push(await subject.report(merge(rounds[i])));
    return rows;
  } finally {
    for (const subject of subjects) await subject.close();
  }
}

/** B: a bare http-proxy in its own process. */
async function proxySubject(app, mode) {
  const proxy = await startBareProxy(app.url, mode);
  return {
    url: proxy.url,
    secret: SECRET,
    pids: [proxy.pid],
    report: async (result) => ({ ...result, listenerPeakRssMiB: mib(await procStatus(proxy.pid, 'VmHWM')) }),
    close: () => proxy.close(),
  };
}

/**
 * C: clockhook listen with one inspector page connected, receiving every capture. `emptyEachRound`:
 * the store is cleared (the page's Clear) before each round, so that an "empty" store is one, and not
 * full from its third round on (10,000 captures is two rounds' worth).
 */
async function listenSubject(app, { maxCaptures = 1000, prefill = 0, emptyEachRound = false, args = [] } = {}) {
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
      ...args,
    ],
    dir,
  );
  const ready = await listenProc.ready;
  const inspector = await connectInspector(ready.inspector);
  await inspector.snapshot;
  return {
    url: ready.listener,
    secret: SECRET,
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

/** D: clockhook relay + listen --relay (embedded sandbox, inspector page connected). */
async function relaySubject(app) {
  const dir = await folder();
  const relay = spawnClockhook(['relay', '--json', '--port', '0', '--host', '127.0.0.1'], dir);
  const relayReady = await relay.ready;
  return relayedListen(app, dir, relayReady.url, { pids: [relay.child.pid], stop: () => relay.stop() });
}

/** A redis-server on a free port, without persistence, for E. */
async function startRedisServer() {
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
async function redisRelaySubject(app) {
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

async function startupWithFullStore(app) {
  const dir = await folder();
  await fullStore(dir, 10_000);
  const started = performance.now();
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
      '10000',
      '--no-open',
    ],
    dir,
  );
  await listenProc.ready;
  const ms = Math.round(performance.now() - started);
  await listenProc.stop();
  await rm(dir, { recursive: true, force: true });
  return ms;
}

async function snapshotOf1000(app) {
  const dir = await folder();
  await fullStore(dir, 1000);
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
      '--no-open',
    ],
    dir,
  );
  const ready = await listenProc.ready;
  const times = [];
  for (let i = 0; i < 5; i++) {
    const inspector = await connectInspector(ready.inspector);
    times.push(await inspector.snapshotMs());
    inspector.socket.close();
  }
  await listenProc.stop();
  await rm(dir, { recursive: true, force: true });
  return Math.round(Math.max(...times));
}

async function memoryAfter(app, body) {
  const dir = await folder();
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
      '--no-open',
    ],
    dir,
  );
  const ready = await listenProc.ready;
  const result = figures(await load(ready.listener, body, signedHeaders(body), { amount: MEMORY_DELIVERIES }));
  await settle(() => listenProc.deliveries >= result.total);
  await new Promise((r) => setTimeout(r, 1000));
  const rss = await procStatus(listenProc.child.pid, 'VmRSS');
  const answered = listenProc.deliveries;
  await listenProc.stop();
  await rm(dir, { recursive: true, force: true });
  return {
    deliveries: result.total,
    non2xx: result.non2xx,
    errors: result.errors,
    answeredByListener: answered,
    rssMiB: mib(rss),
  };
}

/** The testing library's sandbox, started and closed five times in this process: the median start. */
async function testingSandboxStart() {
  const { startSandbox } = await import('../../dist/testing/index.js');
  const times = [];
  for (let i = 0; i < 5; i += 1) {
    const started = performance.now();
    const sandbox = await startSandbox();
    times.push(performance.now() - started);
    await sandbox.close();
  }
  return Math.round(times.sort((a, b) => a - b)[2]);
}

const mib = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;

/**
 * The page's own figures on a full 10,000-capture store (opening it, switching views, filtering), as
 * test/inspector/full-store.browser.test.ts measures them in Chromium, run here with CLOCKHOOK_BENCH=1.
 */
async function inspectorOnFullStore() {
  const vitest = fileURLToPath(new URL('../../node_modules/.bin/vitest', import.meta.url));
  const root = fileURLToPath(new URL('../..', import.meta.url));
  await new Promise((resolve, reject) => {
    const child = spawn(vitest, ['run', 'test/inspector/full-store.browser.test.ts'], {
      cwd: root,
      env: { ...process.env, CLOCKHOOK_BENCH: '1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', () => resolve());
  });
  const figures = JSON.parse(await readFile(join(root, 'test-results', 'inspector-10k.json'), 'utf8'));
  return figures.best;
}

async function settle(condition, timeoutMs = 10_000) {
  const start = Date.now();
  while (!condition() && Date.now() - start < timeoutMs) await new Promise((r) => setTimeout(r, 50));
}

// ---- the run --------------------------------------------------------------------------------

const app = await startApp();
const body = envelopeBody();
const started = Date.now();
console.error(
  `clockhook bench: ${CONNECTIONS} connections, ${DURATION} s per scenario, ~${body.length} B signed envelope`,
);

const rows = {};
console.error('A  direct to the app');
rows.A = await scenarioDirect(app, body);
console.error(
  `B, C, D, E in turns (${ROUNDS} rounds): bare http-proxy with a keep-alive agent; clockhook listen (verify, capture to disk, forward, one inspector connected); relay + listen --relay; two relays on Redis, the request entering the one the listener is not on`,
);
[rows.B, rows.C, rows.D, rows.E] = await interleaved(body, [
  await proxySubject(app, 'keepalive'),
  await listenSubject(app),
  await relaySubject(app),
  await redisRelaySubject(app),
]);
console.error(
  `B and C again with one connection, in turns (${ROUNDS} rounds): the latency a lone delivery sees (reference)`,
);
[rows.B1, rows.C1] = await interleaved(body, [await proxySubject(app, 'keepalive'), await listenSubject(app)], 1);
console.error(
  `C as it runs (waiting for an app that restarts, ready to inject faults: none given) and with --wait-for-app 0, in turns (${ROUNDS} rounds)`,
);
[rows.Cwait, rows.CnoWait] = await interleaved(body, [
  await listenSubject(app),
  await listenSubject(app, { args: ['--wait-for-app', '0'] }),
]);
console.error(
  `C with tracing on (--otlp to a receiver in this process that takes the spans and drops them) and off, in turns (${ROUNDS} rounds)`,
);
[rows.Ctraced, rows.Cuntraced] = await interleaved(body, [
  await listenSubject(app, { args: ['--otlp', app.url] }),
  await listenSubject(app),
]);
console.error('B0 bare http-proxy, default agent (reference)');
[rows.B0] = await interleaved(body, [await proxySubject(app, 'default')]);
console.error(`C with --max-captures 10000, an empty store and a full one, in turns (${ROUNDS} rounds)`);
[rows.C10kEmpty, rows.C10kFull] = await interleaved(body, [
  await listenSubject(app, { maxCaptures: 10_000, emptyEachRound: true }),
  await listenSubject(app, { maxCaptures: 10_000, prefill: 10_000 }),
]);
console.error('start-up with a full 10,000-capture store');
const startupMs = await startupWithFullStore(app);
console.error('inspector snapshot of 1,000 captures');
const snapshotMs = await snapshotOf1000(app);
console.error(`memory after ${MEMORY_DELIVERIES} deliveries at the default retention`);
const memory = await memoryAfter(app, body);
console.error('clockhook/testing: startSandbox, five times');
const testingSandboxMs = await testingSandboxStart();
await app.close();
console.error('the inspector page on a full 10,000-capture store, in Chromium');
const page10k = await inspectorOnFullStore();

const lost =
  ['C', 'C1', 'Cwait', 'CnoWait', 'Ctraced', 'Cuntraced', 'C10kEmpty', 'C10kFull', 'D', 'E'].reduce(
    (sum, key) =>
      sum + rows[key].non2xx + rows[key].errors + Math.max(0, rows[key].total - rows[key].answeredByListener),
    0,
  ) +
  memory.non2xx +
  memory.errors +
  Math.max(0, memory.deliveries - memory.answeredByListener);
const ratio = (a, b) => Math.round((a / b) * 100) / 100;
const targets = [
  {
    figure: 'C throughput / B throughput',
    value: ratio(rows.C.requestsPerSecond, rows.B.requestsPerSecond),
    target: '>= 0.80',
    met: rows.C.requestsPerSecond / rows.B.requestsPerSecond >= 0.8,
  },
  {
    figure: 'C p99 latency - B p99 latency (ms)',
    value: rows.C.p99Ms - rows.B.p99Ms,
    target: '<= 2',
    met: rows.C.p99Ms - rows.B.p99Ms <= 2,
  },
  {
    figure: 'C (app up, no faults) / C with --wait-for-app 0 (throughput)',
    value: ratio(rows.Cwait.requestsPerSecond, rows.CnoWait.requestsPerSecond),
    target: '>= 0.95',
    met: rows.Cwait.requestsPerSecond / rows.CnoWait.requestsPerSecond >= 0.95,
  },
  {
    figure: 'C with tracing on / off (throughput; reference)',
    value: ratio(rows.Ctraced.requestsPerSecond, rows.Cuntraced.requestsPerSecond),
    target: '(reference)',
    met: true,
  },
  {
    figure: 'C full 10k store / C empty store (throughput)',
    value: ratio(rows.C10kFull.requestsPerSecond, rows.C10kEmpty.requestsPerSecond),
    target: '>= 0.90',
    met: rows.C10kFull.requestsPerSecond / rows.C10kEmpty.requestsPerSecond >= 0.9,
  },
  {
    figure: 'D throughput / C throughput',
    value: ratio(rows.D.requestsPerSecond, rows.C.requestsPerSecond),
    target: '>= 0.60',
    met: rows.D.requestsPerSecond / rows.C.requestsPerSecond >= 0.6,
  },
  {
    figure: 'E throughput / D throughput (relay on Redis, across instances / one relay)',
    value: ratio(rows.E.requestsPerSecond, rows.D.requestsPerSecond),
    target: '>= 0.60',
    met: rows.E.requestsPerSecond / rows.D.requestsPerSecond >= 0.6,
  },
  {
    figure: 'clockhook/testing startSandbox, median of 5 (ms)',
    value: testingSandboxMs,
    target: '< 300',
    met: testingSandboxMs < 300,
  },
  {
    figure: 'start-up to ready, full 10,000-capture store (ms)',
    value: startupMs,
    target: '< 1000',
    met: startupMs < 1000,
  },
  { figure: 'inspector snapshot, 1,000 captures (ms)', value: snapshotMs, target: '< 200', met: snapshotMs < 200 },
  ...['openedStore', 'byRequest', 'byEvent', 'filtered', 'typed'].map((what) => ({
    figure: `inspector page, 10,000-capture store: ${what}, best of 3 (ms)`,
    value: Math.round(page10k[what]),
    target: '< 200',
    met: page10k[what] < 200,
  })),
  {
    figure: `listener RSS after ${MEMORY_DELIVERIES} deliveries (MiB)`,
    value: memory.rssMiB,
    target: '< 150',
    met: memory.rssMiB < 150,
  },
  { figure: 'deliveries lost or answered non-2xx', value: lost, target: '0', met: lost === 0 },
];

const cpuPerRequestCB = ratio(rows.C.forwarderCpuUsPerRequest, rows.B.forwarderCpuUsPerRequest);
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 1024 ** 3)} GiB, Node ${process.version}`;
const table = [
  '| scenario | req/s | p50 ms | p99 ms | errors | non-2xx | forwarder peak RSS MiB | forwarder CPU µs/req | load side CPU µs/req | machine idle % |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...[
    ['A direct', rows.A],
    ['B http-proxy keep-alive', rows.B],
    ['B0 http-proxy default agent', rows.B0],
    ['C clockhook listen', rows.C],
    ['B, one connection', rows.B1],
    ['C, one connection', rows.C1],
    ['C, app up, no faults (as C, again)', rows.Cwait],
    ['C, --wait-for-app 0', rows.CnoWait],
    ['C, tracing on (--otlp)', rows.Ctraced],
    ['C, tracing off (as C, again)', rows.Cuntraced],
    ['C, --max-captures 10000, empty', rows.C10kEmpty],
    ['C, --max-captures 10000, full', rows.C10kFull],
    ['D relay + listen --relay', rows.D],
    ['E two relays on Redis, across instances', rows.E],
  ].map(
    ([name, r]) =>
      `| ${name} | ${r.requestsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${r.errors} | ${r.non2xx} | ${r.listenerPeakRssMiB ?? '-'} | ${r.forwarderCpuUsPerRequest ?? '-'} | ${r.loadSideCpuUsPerRequest ?? '-'} | ${r.machineIdlePercent ?? '-'} |`,
  ),
  '',
  '| figure | value | target | |',
  '|---|---|---|---|',
  ...targets.map((t) => `| ${t.figure} | ${t.value} | ${t.target} | ${t.met ? 'met' : 'NOT MET'} |`),
  '',
  `For reference, not a target: C's listener spends ${cpuPerRequestCB}× the CPU per request of B's bare proxy (forwarder CPU: all threads of the forwarding processes; load side: the benchmark's own process, with the load generator, the app, and in C and D the inspector client).`,
  `For reference, not a target: with one connection, so that no delivery queues behind another, C's p99 is ${rows.C1.p99Ms} ms against B's ${rows.B1.p99Ms} ms (a gap of ${rows.C1.p99Ms - rows.B1.p99Ms} ms), and C makes ${ratio(rows.C1.requestsPerSecond, rows.B1.requestsPerSecond)} of B's throughput.`,
].join('\n');

console.log(
  `\nMachine: ${machine}; ${CONNECTIONS} connections, ${DURATION} s per scenario; run took ${Math.round((Date.now() - started) / 1000)} s\n`,
);
console.log(table);
await writeFile(
  RESULTS,
  `${JSON.stringify({ date: new Date().toISOString(), machine, connections: CONNECTIONS, durationSeconds: DURATION, scenarios: rows, cpuPerRequestCB, startupMs, snapshotMs, memory, targets }, null, 2)}\n`,
);
console.log(`\nWritten to ${RESULTS}`);
process.exitCode = targets.every((t) => t.met) ? 0 : 1;
