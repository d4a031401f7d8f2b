import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

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

const corked = new WeakSet<Socket>();

/**
 * Sends a message (text, or binary for a Buffer) on a WebSocket so that every frame sent to it
 * during one turn of the event loop leaves in one write: its TCP socket stays corked until the
 * turn's check phase. ws writes each frame at once otherwise, one system call per frame, which
 * under load cost the listener and the relay more than building the frames. (`_socket` is ws's
 * own field for that socket.)
 */
export function sendInTurn(ws: WebSocket, data: string | Buffer): void {
  const tcp = (ws as WebSocket & { _socket?: Socket })._socket;
  if (tcp && !corked.has(tcp)) {
    corked.add(tcp);
    tcp.cork();
    setImmediate(() => {
      corked.delete(tcp);
      tcp.uncork();
    });
  }
  ws.send(data);
}
