import { connect, type Socket } from 'node:net';

export interface RawResult {
  /** The status line, or '' when the server closed without answering. */
  status: string;
  response: string;
  closed: boolean;
  /** Milliseconds until the answer or the close. */
  ms: number;
}

/**
 * Writes raw bytes to a server and collects whatever comes back until it closes the connection or
 * `waitMs` passes (with `untilStatus`, until the status line has come). For HTTP that no client library
 * would send.
 */
export function sendRaw(
  port: number,
  chunks: (string | Buffer)[],
  { waitMs = 3000, gapMs = 0, untilStatus = false } = {},
): Promise<RawResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket: Socket = connect(port, '127.0.0.1');
    let response = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: response.split('\r\n', 1)[0], response, closed, ms: Math.round(performance.now() - started) });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (data) => {
      response += data.toString('latin1');
      if (untilStatus && response.includes('\r\n')) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        socket.write(chunk);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}
