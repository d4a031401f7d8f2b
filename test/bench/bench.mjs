// npm run bench: clockhook beside the bare proxy, in one run, on one machine, as ratios (issue 8; the rows
// and targets of issue 52). Plain ESM over dist/ (built by `npm run bench` first), so it runs on Node 20
// without a TS loader. Every request is its own event, signed as it is sent; one row repeats one event id.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  inspectorOnFullStore,
  MEMORY_DELIVERIES,
  memoryAfter,
  snapshotOf1000,
  startupWithFullStore,
  testingSandboxStart,
} from './figures.mjs';
import { CONNECTIONS, DURATION, figures, interleaved, load, ROUNDS } from './load.mjs';
import { machineLine, resultTable, targetsOf } from './report.mjs';
import { floorSubject, listenSubject, proxySubject, redisRelaySubject, relaySubject, startApp } from './subjects.mjs';
import { SECRET } from './traffic.mjs';

const RESULTS = fileURLToPath(new URL('../../bench-results.json', import.meta.url));
const say = (line) => console.error(line);

const app = await startApp();
const started = Date.now();
say(
  `clockhook bench: ${CONNECTIONS} connections, ${DURATION} s per scenario, ~2 KB signed envelopes, one event id each`,
);

const rows = {};
say('A  direct to the app');
rows.A = figures(await load(app.url, { secret: SECRET, duration: DURATION }));
say(
  `B, F, C, D, E in turns (${ROUNDS} rounds): bare http-proxy with a keep-alive agent; the floor (verify, journal and fsync, http-proxy, nothing else); clockhook listen (verify, capture to disk, forward, one inspector connected); relay + listen --relay; two relays on Redis, the request entering the one the listener is not on`,
);
[rows.B, rows.F, rows.C, rows.D, rows.E] = await interleaved([
  await proxySubject(app, 'keepalive'),
  await floorSubject(app),
  await listenSubject(app),
  await relaySubject(app),
  await redisRelaySubject(app),
]);
say(
  `B and F again, paced at C's throughput (${rows.C.requestsPerSecond} req/s), in turns: their CPU per request at the same load (reference)`,
);
[rows.Bpaced, rows.Fpaced] = await interleaved([
  { ...(await proxySubject(app, 'keepalive')), overallRate: rows.C.requestsPerSecond },
  { ...(await floorSubject(app)), overallRate: rows.C.requestsPerSecond },
]);
say(`C with an event id each and with one id repeated (into the store capped at 1,000), in turns (${ROUNDS} rounds)`);
[rows.Cunique, rows.Crepeated] = await interleaved([
  await listenSubject(app),
  await listenSubject(app, { traffic: 'repeated' }),
]);
say(`B and C again with one connection, in turns (${ROUNDS} rounds): the latency a lone delivery sees (reference)`);
[rows.B1, rows.C1] = await interleaved([await proxySubject(app, 'keepalive'), await listenSubject(app)], 1);
say(`C waiting for an app that restarts (the default) and with --wait-for-app 0, in turns (${ROUNDS} rounds)`);
[rows.Cwait, rows.CnoWait] = await interleaved([
  await listenSubject(app),
  await listenSubject(app, { args: ['--wait-for-app', '0'] }),
]);
say(
  `C with tracing on (--otlp to a receiver in this process that drops the spans) and off, in turns (${ROUNDS} rounds)`,
);
[rows.Ctraced, rows.Cuntraced] = await interleaved([
  await listenSubject(app, { args: ['--otlp', app.url] }),
  await listenSubject(app),
]);
say(`C with faults on (--faults fail=0%: every delivery planned, none injected) and off, in turns (${ROUNDS} rounds)`);
[rows.Cfaults, rows.Cunfaulted] = await interleaved([
  await listenSubject(app, { args: ['--faults', 'fail=0%'] }),
  await listenSubject(app),
]);
say('B0 bare http-proxy, default agent (reference)');
[rows.B0] = await interleaved([await proxySubject(app, 'default')]);
say(`C with --max-captures 10000, an empty store and a full one, in turns (${ROUNDS} rounds)`);
[rows.C10kEmpty, rows.C10kFull] = await interleaved([
  await listenSubject(app, { maxCaptures: 10_000, emptyEachRound: true }),
  await listenSubject(app, { maxCaptures: 10_000, prefill: 10_000 }),
]);
say('start-up with a full 10,000-capture store');
const startupMs = await startupWithFullStore(app);
say('inspector snapshot of 1,000 captures');
const snapshotMs = await snapshotOf1000(app);
say(`memory after ${MEMORY_DELIVERIES} deliveries at the default retention`);
const memory = await memoryAfter(app);
say('clockhook/testing: startSandbox, five times');
const testingSandboxMs = await testingSandboxStart();
await app.close();
say('the inspector page on a full 10,000-capture store, in Chromium');
const page10k = await inspectorOnFullStore();

const measured = { rows, startupMs, snapshotMs, memory, testingSandboxMs, page10k };
const targets = targetsOf(measured);
console.log(
  `\n${machineLine()}; ${CONNECTIONS} connections, ${DURATION} s per scenario; run took ${Math.round((Date.now() - started) / 1000)} s\n`,
);
console.log(resultTable(rows, targets));
await writeFile(
  RESULTS,
  `${JSON.stringify({ date: new Date().toISOString(), machine: machineLine(), connections: CONNECTIONS, durationSeconds: DURATION, scenarios: rows, startupMs, snapshotMs, memory, targets }, null, 2)}\n`,
);
console.log(`\nWritten to ${RESULTS}`);
process.exitCode = targets.every((t) => t.met) ? 0 : 1;
