// A port that is taken, said for people: which process holds it (where the system tells: Linux's /proc), and a
// port that is free now, so that the next command works as typed.
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer } from 'node:net';

/** The inodes of the listening TCP sockets on `port` (/proc/net/tcp and tcp6: state 0A is LISTEN). */
async function listeningInodes(port: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A') inodes.add(fields[9]);
    }
  }
  return inodes;
}

/** The command line of a process, shortened to what names it (`node …/clockhook listen --port 4300`). */
async function commandOf(pid: string): Promise<string> {
  const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter(Boolean);
  const shown = argv.map((arg, i) => (i > 0 && arg.includes('/') ? `…/${arg.split('/').at(-1)}` : arg)).join(' ');
  return shown.length > 80 ? `${shown.slice(0, 79)}…` : shown;
}

/**
 * Who holds `port`: `pid 1234 (node …/clockhook.js listen)`, or null where the system does not tell (not
 * Linux, or another user's process).
 */
export async function portHolder(port: number): Promise<string | null> {
  const inodes = await listeningInodes(port);
  if (inodes.size === 0) return null;
  for (const pid of (await readdir('/proc').catch(() => [])).filter((name) => /^\d+$/.test(name))) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return `pid ${pid} (${await commandOf(pid)})`;
    }
  }
  return null;
}

/** Whether `port` on `host` can be listened on now. */
function isFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

/** The first port after `port` that is free on `host` now (of the next 100), or null. */
export async function nextFreePort(port: number, host: string): Promise<number | null> {
  for (let next = port + 1; next <= Math.min(port + 100, 65_535); next++) if (await isFree(next, host)) return next;
  return null;
}
