import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { StringDecoder } from 'node:string_decoder';

export interface PostOptions {
  /** Aborts the request, or the reading of its answer (which then ends with what arrived). */
  signal: AbortSignal;
  /** How many characters of the answer's body to keep; the rest is not read. */
  maxChars: number;
  /** @default true */
  rejectUnauthorized?: boolean;
}

/**
 * POSTs `body` with the headers given and no others but Host, Content-Length and Connection, as a
 * webhook sender does; fetch would add Accept, Accept-Language, Sec-Fetch-Mode and Accept-Encoding.
 * Each request has a connection of its own, closed after it: a kept-alive one, reused just as the
 * receiver closes it, would fail a delivery for nothing.
 * Resolves with the status and the beginning of the answer: an answer cut short, by the receiver or
 * by `signal`, still resolves with what arrived. Rejects with the request's error (its `code`:
 * ECONNREFUSED, ECONNRESET, ENOTFOUND…, or ABORT_ERR from `signal`) when no answer came. Redirects are
 * answers, never followed (their Location comes with them).
 */
export function postBytes(
  target: URL,
  headers: Record<string, string | string[]>,
  body: string | Buffer,
  options: PostOptions,
): Promise<{ status: number; body: string; headers: IncomingHttpHeaders; location?: string }> {
  return new Promise((resolve, reject) => {
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const sent = Object.assign({}, headers, { 'content-length': String(Buffer.byteLength(body)) });
    const req = request(
      target,
      {
        method: 'POST',
        headers: sent,
        agent: false,
        signal: options.signal,
        rejectUnauthorized: options.rejectUnauthorized ?? true,
      },
      (res) => {
        const decoder = new StringDecoder('utf8');
        let text = '';
        const { location } = res.headers;
        const done = () =>
          resolve({
            status: res.statusCode ?? 0,
            body: (text + decoder.end()).slice(0, options.maxChars),
            headers: res.headers,
            ...(location ? { location } : {}),
          });
        res.on('data', (chunk: Buffer) => {
          text += decoder.write(chunk);
          if (text.length < options.maxChars) return;
          done();
          res.destroy();
        });
        res.on('end', done);
        res.on('error', done);
        res.on('close', done);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
