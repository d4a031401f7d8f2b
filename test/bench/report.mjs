// The benchmark's table and targets (issue 52): per-delivery CPU of the listener beside the bare proxy's,
// throughput and p99 ratios, the repeated-id and full-store rows, memory, and the page's own figures.
import { cpus, totalmem } from 'node:os';
import { MEMORY_DELIVERIES } from './figures.mjs';

const ratio = (a, b) => Math.round((a / b) * 100) / 100;

export const machineLine = () =>
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 1024 ** 3)} GiB, Node ${process.version}`;

/** A target: `value` against `limit`, at least (`>=`) or at most (`<=`, `<`). */
function target(figure, value, op, limit) {
  const met = op === '>=' ? value >= limit : op === '<=' ? value <= limit : value < limit;
  return { figure, value, target: `${op} ${limit}`, met };
}

/** Deliveries lost or answered other than 2xx, over every listen row and the memory run. */
function lostOf(rows, memory) {
  const listens = ['C', 'Cunique', 'Crepeated', 'C1', 'Cwait', 'CnoWait', 'Ctraced', 'Cuntraced', 'Cfaults'];
  const keys = [...listens, 'Cunfaulted', 'C10kEmpty', 'C10kFull', 'D', 'E'];
  const lost = (r, total = r.total, answered = r.answeredByListener) =>
    r.non2xx + r.errors + Math.max(0, total - answered);
  return keys.reduce((sum, key) => sum + lost(rows[key]), 0) + lost(memory, memory.deliveries);
}

/** A figure shown for reference, with no target. */
const reference = (figure, value) => ({ figure, value, target: '(reference)', met: true });

export function targetsOf({ rows, startupMs, snapshotMs, memory, testingSandboxMs, page10k }) {
  const cpu = (row) => row.forwarderCpuUsPerRequest;
  const rps = (row) => row.requestsPerSecond;
  const lost = lostOf(rows, memory);
  return [
    target('C listener CPU per delivery / B bare proxy CPU per request', ratio(cpu(rows.C), cpu(rows.B)), '<=', 1.5),
    reference(
      'F the floor CPU per delivery / B (what keeping the promise costs at least)',
      ratio(cpu(rows.F), cpu(rows.B)),
    ),
    reference('C listener CPU per delivery / F the floor', ratio(cpu(rows.C), cpu(rows.F))),
    reference("C listener CPU per delivery / B paced at C's throughput", ratio(cpu(rows.C), cpu(rows.Bpaced))),
    reference("C listener CPU per delivery / F paced at C's throughput", ratio(cpu(rows.C), cpu(rows.Fpaced))),
    target('D listener + relay CPU per delivery / B', ratio(cpu(rows.D), cpu(rows.B)), '<=', 2.5),
    target('C p99 latency - B p99 latency (ms)', rows.C.p99Ms - rows.B.p99Ms, '<=', 3),
    target('C throughput / B throughput', ratio(rps(rows.C), rps(rows.B)), '>=', 0.6),
    target(
      'C one event id repeated / an id each (throughput)',
      ratio(rps(rows.Crepeated), rps(rows.Cunique)),
      '>=',
      0.9,
    ),
    target('C full 10k store / C empty store (throughput)', ratio(rps(rows.C10kFull), rps(rows.C10kEmpty)), '>=', 0.95),
    target(
      'C waiting for the app (default) / --wait-for-app 0 (throughput)',
      ratio(rps(rows.Cwait), rps(rows.CnoWait)),
      '>=',
      0.95,
    ),
    target('C faults on / off (throughput)', ratio(rps(rows.Cfaults), rps(rows.Cunfaulted)), '>=', 0.95),
    reference('C tracing on / off (throughput; reference)', ratio(rps(rows.Ctraced), rps(rows.Cuntraced))),
    target('D throughput / C throughput', ratio(rps(rows.D), rps(rows.C)), '>=', 0.6),
    target(
      'E throughput / D throughput (relay on Redis, across instances / one relay)',
      ratio(rps(rows.E), rps(rows.D)),
      '>=',
      0.6,
    ),
    target('clockhook/testing startSandbox, median of 5 (ms)', testingSandboxMs, '<', 300),
    target('start-up to ready, full 10,000-capture store (ms)', startupMs, '<', 1000),
    target('inspector snapshot, 1,000 captures (ms)', snapshotMs, '<', 200),
    ...['openedStore', 'byRequest', 'byEvent', 'filtered', 'typed'].map((what) =>
      target(`inspector page, 10,000-capture store: ${what}, best of 3 (ms)`, Math.round(page10k[what]), '<', 200),
    ),
    target(`listener RSS after ${MEMORY_DELIVERIES} deliveries (MiB)`, memory.rssMiB, '<', 150),
    target('deliveries lost or answered non-2xx', lost, '<=', 0),
  ];
}

const NAMES = [
  ['A', 'A direct'],
  ['B', 'B http-proxy keep-alive'],
  ['B0', 'B0 http-proxy default agent'],
  ['Bpaced', "B, paced at C's throughput"],
  ['F', 'F the floor: verify, journal + fsync, http-proxy'],
  ['Fpaced', "F, paced at C's throughput"],
  ['C', 'C clockhook listen'],
  ['Cunique', 'C, an event id each (as C, again)'],
  ['Crepeated', 'C, one event id repeated, store capped at 1,000'],
  ['B1', 'B, one connection'],
  ['C1', 'C, one connection'],
  ['Cwait', 'C, --wait-for-app 10 s (the default)'],
  ['CnoWait', 'C, --wait-for-app 0'],
  ['Ctraced', 'C, tracing on (--otlp)'],
  ['Cuntraced', 'C, tracing off (as C, again)'],
  ['Cfaults', 'C, faults on (--faults fail=0%)'],
  ['Cunfaulted', 'C, faults off (as C, again)'],
  ['C10kEmpty', 'C, --max-captures 10000, empty'],
  ['C10kFull', 'C, --max-captures 10000, full'],
  ['D', 'D relay + listen --relay'],
  ['E', 'E two relays on Redis, across instances'],
];

export function resultTable(rows, targets) {
  const cell = (value) => value ?? '-';
  return [
    '| scenario | req/s | p50 ms | p99 ms | errors | non-2xx | forwarder peak RSS MiB | forwarder CPU µs/req | load side CPU µs/req | machine idle % |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...NAMES.map(
      ([key, name]) =>
        `| ${name} | ${rows[key].requestsPerSecond} | ${rows[key].p50Ms} | ${rows[key].p99Ms} | ${rows[key].errors} | ${rows[key].non2xx} | ${cell(rows[key].listenerPeakRssMiB)} | ${cell(rows[key].forwarderCpuUsPerRequest)} | ${cell(rows[key].loadSideCpuUsPerRequest)} | ${cell(rows[key].machineIdlePercent)} |`,
    ),
    '',
    '| figure | value | target | |',
    '|---|---|---|---|',
    ...targets.map(
      (t) =>
        `| ${t.figure} | ${t.value} | ${t.target} | ${t.target === '(reference)' ? '' : t.met ? 'met' : 'NOT MET'} |`,
    ),
    '',
    "Forwarder CPU: all threads of the forwarding processes (the bare proxy; the listener; in D the listener and the relay; in E both relays and redis-server too). Load side: the benchmark's own process, with the load generator (which signs each request), the app, and in C, D and E the inspector client.",
    `With one connection, so that no delivery queues behind another, C's p99 is ${rows.C1.p99Ms} ms against B's ${rows.B1.p99Ms} ms (a gap of ${rows.C1.p99Ms - rows.B1.p99Ms} ms), and C makes ${ratio(rows.C1.requestsPerSecond, rows.B1.requestsPerSecond)} of B's throughput (reference).`,
  ].join('\n');
}
