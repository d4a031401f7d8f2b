import type { Server } from 'node:http';

/**
 * The Fetch standard's bad ports (https://fetch.spec.whatwg.org/#port-blocking): browsers will not open a
 * page on them, and Node's fetch, which clockhook calls APIs with, will not connect to them. A test holds
 * this list to Node's own fetch.
 */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Whether browsers and fetch refuse `port` (see BAD_PORTS). */
export function isBadPort(port: number): boolean {
  return BAD_PORTS.has(port);
}

/** Why such a port cannot be used, for messages. */
export const BAD_PORT_WHY = 'the Fetch standard blocks it, with 9, 6667 and others';

/** "is on port 6000, which fetch refuses…" when `url` is on one of BAD_PORTS; null otherwise. */
export function badPortProblem(url: URL): string | null {
  return url.port && isBadPort(Number(url.port))
    ? `is on port ${url.port}, which fetch refuses to connect to (${BAD_PORT_WHY})`
    : null;
}

/** Whether a server bound to `host` listens on every interface (`0.0.0.0`, `::`) rather than one address. */
export const isEveryInterface = (host: string) => host === '0.0.0.0' || host === '::';

/** Listens on `port` and `host`; rejects with the server's error (EADDRINUSE, EACCES…) instead of throwing it later. */
export function listenOn(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops accepting and drops every open connection, idle or not; resolves once the server is closed. */
export function closeNow(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Starts something on `port`; when that port is taken, says so with `taken` and starts it on a
 * free one instead. Any other failure is the caller's.
 */
export async function onPortOrFree<T>(
  port: number,
  start: (port: number) => Promise<T>,
  taken: (port: number) => void,
): Promise<T> {
  try {
    return await start(port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    taken(port);
    return start(0);
  }
}
