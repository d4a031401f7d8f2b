// For the plain-ESM scripts over dist/ (npm run bench, npm run soak): clockhook as a child process.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/clockhook.js', import.meta.url));

/**
 * A clockhook command with --json as a child process: `ready` resolves with its ready line (and
 * rejects if it exits first); every later NDJSON line goes to `onLine`. `nodeArgs`: Node's own flags (--cpu-prof);
 * `bin`: another checkout's bin/clockhook.js (npm run bench:compare), this one's by default.
 */
export function spawnJson(args, cwd, onLine = () => {}, { nodeArgs = [], bin = BIN } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, bin, ...args], {
    cwd,
    env: { ...process.env, CI: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let buffer = '';
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
        const line = JSON.parse(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        if (line.event === 'ready') resolve(line);
        else onLine(line);
      }
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => reject(new Error(`clockhook ${args[0]} exited ${code}: ${stderr}`)));
  });
  return {
    child,
    ready,
    /** What it wrote to stderr so far. */
    get stderr() {
      return stderr;
    },
    /** Whether it has exited (by itself, or killed by someone else). */
    get exited() {
      return child.exitCode !== null || child.signalCode !== null;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A `/proc/<pid>/status` memory field (VmRSS, VmHWM…) in bytes. */
export async function procStatus(pid, field) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
}

/**
 * CPU time a process has used, all its threads, user and system, in ms (`/proc/<pid>/stat`, in clock
 * ticks of 10 ms: USER_HZ is 100 on every Linux this runs on).
 */
export async function procCpuMs(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The whole machine's CPU time so far, in clock ticks (`/proc/stat`): all of it (user, nice, system,
 * idle, iowait, irq, softirq, steal; guest time is already in user) and the idle part (idle, iowait).
 */
export async function machineCpu() {
  const [, ...ticks] = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0].trim().split(/\s+/).map(Number);
  return { idle: ticks[3] + ticks[4], total: ticks.slice(0, 8).reduce((sum, t) => sum + t, 0) };
}
