import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerError } from './answers.js';

/** How long and how much of a refused body is read and dropped after the answer. */
export interface LingerLimits {
  maxBytes: number;
  maxMs: number;
}

/** 10 s and 32 MiB: enough for a sender on a slow link to finish sending and read the answer. */
export const LINGER: LingerLimits = { maxBytes: 32 * 1024 * 1024, maxMs: 10_000 };

/**
 * Lingering close, as nginx does it: after an early answer (413, 429, 503, with `connection: close`) to
 * a request whose body is still arriving, close only our side for writing, read and drop the rest for a
 * bounded time and size, then close. Closing at once would make the sender's kernel get a reset while
 * it is still writing: it reports EPIPE or ECONNRESET and never reads the answer. Call it right after
 * the answer is written.
 */
export function lingerAfterAnswer(req: IncomingMessage, limits: LingerLimits = LINGER): void {
  const socket = req.socket;
  if (req.complete || !socket) return;
  // Node ends a `connection: close` answer with destroySoon(), which closes the socket for reading too;
  // without it Node only ends the writing side (socket.end()), which is the half-close wanted here.
  Object.defineProperty(socket, 'destroySoon', { value: undefined, configurable: true });
  let read = 0;
  const cut = () => {
    clearTimeout(timer);
    req.off('data', onData);
    socket.destroy();
  };
  const timer = setTimeout(cut, limits.maxMs);
  timer.unref();
  const onData = (chunk: Buffer) => {
    read += chunk.length;
    if (read > limits.maxBytes) cut();
  };
  // Counted on the request: Node's HTTP parser reads the socket itself, so the socket emits no 'data'.
  req.on('data', onData);
  socket.once('close', () => clearTimeout(timer));
  req.resume();
}

/**
 * An answer in the error envelope (see answerError) given before the request's body was read whole:
 * it says `connection: close`, and the rest of the body is read and dropped behind it (lingerAfterAnswer).
 */
export function answerEarly(
  req: IncomingMessage | undefined,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  {
    requestId,
    headers = {},
    linger = LINGER,
  }: { requestId?: string; headers?: Record<string, string>; linger?: LingerLimits } = {},
): void {
  // A request handed over inside the process (a relayed one) comes whole, with no socket of its own.
  const whole = !req?.socket || req.complete;
  answerError(res, status, code, message, {
    requestId,
    headers: whole ? headers : Object.assign({}, headers, { connection: 'close' }),
  });
  if (req && !whole) lingerAfterAnswer(req, linger);
}
