import type { IncomingMessage } from 'node:http';

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1); never passed on. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export type Headers = Record<string, string | string[]>;

/**
 * The end-to-end headers: hop-by-hop ones and any the Connection header names are left out. Runs on
 * every delivery, so it makes no arrays unless there is a Connection header to read.
 */
export function withoutHopByHop(headers: IncomingMessage['headers'] | Headers): Headers {
  const connection = headers.connection ?? headers.Connection;
  const listed =
    connection === undefined
      ? null
      : String(connection)
          .split(',')
          .map((name) => name.trim().toLowerCase());
  const result: Headers = {};
  for (const name in headers) {
    const value = headers[name];
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || (listed !== null && listed.includes(lower))) continue;
    result[name] = value;
  }
  return result;
}

/** The request's headers as stored: Node gives them lower-cased already; undefined ones are dropped. */
export function copyHeaders(req: IncomingMessage): Headers {
  const headers: Headers = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = value;
  return headers;
}
