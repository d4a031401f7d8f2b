import { EventEmitter } from 'node:events';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Capture } from '../store/index.js';

/** A request handed to the listener inside this process (by the relay client, or a replay), already read whole. */
export interface DirectRequest {
  method: string;
  /** Path and query, as the sender asked for them. */
  path: string;
  headers: Record<string, string | string[]>;
  body: Buffer;
  /** The hop that handed it over (the relay's address), for X-Forwarded-For. */
  remoteAddress?: string;
  /** Whether that hop was reached over TLS, for X-Forwarded-Proto. */
  encrypted?: boolean;
}

/** What the sender is to get back. */
export interface DirectAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/**
 * The `ServerResponse` side of a direct request: collects the status, headers and body the listener
 * and the forwarder write, and resolves `done` when the answer is complete.
 */
class CollectedAnswer {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  readonly done: Promise<DirectAnswer>;
  readonly #headers: Record<string, string | string[]> = {};
  readonly #chunks: Buffer[] = [];
  #resolve: (answer: DirectAnswer) => void = () => {};

  constructor() {
    this.done = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  setHeader(name: string, value: number | string | readonly string[]): this {
    this.#headers[name.toLowerCase()] =
      typeof value === 'number' ? String(value) : typeof value === 'string' ? value : [...value];
    return this;
  }

  writeHead(statusCode: number, reasonOrHeaders?: string | OutgoingHttpHeaders, headers?: OutgoingHttpHeaders): this {
    const given = typeof reasonOrHeaders === 'object' ? reasonOrHeaders : headers;
    for (const [name, value] of Object.entries(given ?? {})) if (value !== undefined) this.setHeader(name, value);
    this.statusCode = statusCode;
    this.headersSent = true;
    return this;
  }

  write(chunk: Buffer | string): boolean {
    this.headersSent = true;
    this.#chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return true;
  }

  end(chunk?: Buffer | string): this {
    if (this.writableEnded) return this;
    if (chunk !== undefined) this.write(chunk);
    this.writableEnded = true;
    this.#resolve({ status: this.statusCode, headers: this.#headers, body: Buffer.concat(this.#chunks) });
    return this;
  }

  /** Over HTTP the sender would see the connection cut; here it gets a 502 saying so. */
  destroy(): this {
    if (this.writableEnded) return this;
    this.writableEnded = true;
    const body = JSON.stringify({
      error: {
        type: 'api_error',
        code: 'answer_cut',
        message: 'The answer was cut off after it had begun; see the listener log.',
      },
    });
    this.#resolve({ status: 502, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) });
    return this;
  }
}

/**
 * Dresses a direct request as the `IncomingMessage`/`ServerResponse` pair the listener and
 * http-proxy work with, so it takes exactly the path of a delivery over HTTP without a loopback
 * HTTP request (a hop that cost much of the listen process's CPU per relayed delivery). Only what
 * they use is there: method, url, headers, the hop's address and TLS flag, events, `resume`; and on
 * the answer side `setHeader`, `writeHead`, `write`, `end`, `destroy`, `headersSent`, `writableEnded`.
 */
export function directExchange(request: DirectRequest): {
  req: IncomingMessage;
  res: ServerResponse;
  answer: Promise<DirectAnswer>;
} {
  const hop = {
    remoteAddress: request.remoteAddress ?? '127.0.0.1',
    encrypted: request.encrypted ?? false,
    destroyed: false,
  };
  const req = Object.assign(new EventEmitter(), {
    method: request.method,
    url: request.path,
    // Stored and matched lower-cased, as Node gives them over HTTP.
    headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value])),
    httpVersion: '1.1',
    complete: true,
    socket: hop,
    connection: hop,
    resume() {
      return req;
    },
  });
  const res = new CollectedAnswer();
  return { req: req as unknown as IncomingMessage, res: res as unknown as ServerResponse, answer: res.done };
}

/** What `deliver` resolves with: the capture made (null when the request was refused unread) and the answer. */
export interface Delivered {
  capture: Capture | null;
  answer: DirectAnswer;
}
