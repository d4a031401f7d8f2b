import type { Server } from 'node:http';

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
export async function onPortOrFree<T>(port: number, start: (port: number) => Promise<T>, taken: (port: number) => void): Promise<T> {
  try {
    return await start(port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    taken(port);
    return start(0);
  }
}
