// Load on a subject, and what it cost: autocannon's figures, the CPU time of the processes that forward, of
// the benchmark's own process, and how idle the machine was; subjects compared as a ratio take turns.
import autocannon from 'autocannon';
import { machineCpu, procCpuMs } from '../helpers/clockhook-process.mjs';
import { trafficRequests } from './traffic.mjs';

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
export const DURATION = Number(process.env.BENCH_DURATION ?? 10);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
/** Seconds each subject is loaded, unmeasured, before its rounds. */
export const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);

/** `options.amount` requests, or `options.duration` seconds of them, of `traffic` signed with `secret`. */
export function load(url, { traffic = 'unique', secret, connections = CONNECTIONS, ...options }) {
  return new Promise((resolve, reject) => {
    const requests = trafficRequests(traffic, secret);
    autocannon({ url, method: 'POST', requests, connections, ...options }, (error, result) => {
      if (error) reject(error);
      else resolve(result);
    });
  });
}

export function figures(result) {
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
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
async function measuredLoad(subject, connections) {
  const forwarderCpu = async () => (await Promise.all(subject.pids.map(procCpuMs))).reduce((a, b) => a + b, 0);
  const [forwarder0, self0, machine0] = [await forwarderCpu(), process.cpuUsage(), await machineCpu()];
  const result = figures(
    await load(subject.url, {
      traffic: subject.traffic,
      secret: subject.secret,
      duration: subject.duration ?? DURATION / ROUNDS,
      connections,
      // A subject loaded at a set pace (requests a second over all connections) rather than as fast as it goes.
      ...(subject.overallRate ? { overallRate: subject.overallRate } : {}),
    }),
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
export async function interleaved(subjects, connections = CONNECTIONS) {
  const rounds = subjects.map(() => []);
  try {
    // Each subject is warmed up first, unmeasured: a process's first seconds compile its code (JIT), and the
    // worst round's p99 would otherwise be that.
    for (const subject of subjects) if (WARMUP > 0) await measuredLoad({ ...subject, duration: WARMUP }, connections);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, subject] of subjects.entries()) {
        await subject.beforeRound?.();
        rounds[i].push(await measuredLoad(subject, connections));
      }
    }
    const rows = [];
    for (const [i, subject] of subjects.entries()) rows.push(await subject.report(merge(rounds[i])));
    return rows;
  } finally {
    for (const subject of subjects) await subject.close();
  }
}

export async function settle(condition, timeoutMs = 10_000) {
  const start = Date.now();
  while (!condition() && Date.now() - start < timeoutMs) await new Promise((r) => setTimeout(r, 50));
}

export const mib = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
