import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** performance.now() when the body was complete. */
  at: number;
}

export type Responder = (request: ReceivedRequest, res: ServerResponse, req: IncomingMessage) => void;

export const answer200: Responder = (_request, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"ok":true}');
};

/**
 * A receiver app on port 0 that records every request it gets. `respond` decides the answer and can
 * be swapped while it runs; `waitFor(n)` resolves once n requests have arrived.
 */
export async function startReceiver(respond: Responder = answer200) {
  const received: ReceivedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const state = { respond };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: performance.now(),
      };
      received.push(request);
      for (const waiter of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      state.respond(request, res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    received,
    setResponder(next: Responder) {
      state.respond = next;
    },
    waitFor(count: number, timeoutMs = 10_000): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * An app being written: while `failing` is set it answers 500 with a JSON error ("handler broken"), and 200
 * once it is fixed (`failing = false`).
 */
export async function startFixableApp() {
  const app = await startReceiver((_request, res) => {
    res.writeHead(app.failing ? 500 : 200, { 'content-type': 'application/json' });
    res.end(app.failing ? '{"error":{"message":"handler broken"}}' : '{"ok":true}');
  }).then((receiver) => Object.assign(receiver, { failing: false }));
  return app;
}
export type FixableApp = Awaited<ReturnType<typeof startFixableApp>>;
