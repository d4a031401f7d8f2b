import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * An answer in the contract's error envelope (`{ "error": { type, code, message, requestId } }`), which
 * the listener and the relay use for every answer they make themselves. A response whose head is already
 * out cannot change its status: its connection is cut instead.
 */
export function answerError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  { requestId, headers = {} }: { requestId?: string; headers?: Record<string, string> } = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const type = status >= 500 ? 'api_error' : 'invalid_request_error';
  const body = JSON.stringify({ error: { type, code, message, ...(requestId ? { requestId } : {}) } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** The message of an error envelope, or the answer's text when it is not one. */
export function errorMessage(body: Buffer): string {
  const text = body.toString('utf8');
  try {
    return String((JSON.parse(text) as { error: { message: unknown } }).error.message);
  } catch {
    return text;
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  503: 'Service Unavailable',
};

/**
 * An answer written straight to a socket that has no `ServerResponse`: a refused WebSocket upgrade, or a
 * request Node's parser could not read. The connection closes behind it.
 */
export function answerOnSocket(socket: Duplex, status: number, message = ''): void {
  if (!socket.writable || (socket as Socket).destroyed) {
    socket.destroy();
    return;
  }
  const type = message ? 'content-type: text/plain\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nconnection: close\r\n${type}content-length: ${Buffer.byteLength(message)}\r\n\r\n${message}`,
  );
}

/** Malformed HTTP never reaches a handler: answer what Node's parser found, then close (`clientError`). */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  answerOnSocket(socket, status);
}
