import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

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
