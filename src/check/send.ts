import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface SentRequest {
  headers: Record<string, string>;
  body: Buffer;
}

export type Answer =
  | { kind: 'answer'; status: number; body: string; durationMs: number }
  | { kind: 'error'; error: string; code?: string; durationMs: number };

/** POSTs exact bytes to the app; never throws: a refused or timed-out request is an `error` answer. */
export function sendDelivery(target: URL, { headers, body }: SentRequest, timeoutMs: number): Promise<Answer> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(target, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) }, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < 2000) chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () => resolve({ kind: 'answer', status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, 2000), durationMs: elapsed() }));
      res.on('error', (error) => resolve({ kind: 'error', error: error.message, durationMs: elapsed() }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => {
      const text = error.code === 'ECONNREFUSED' ? 'connection refused' : error.code === 'ECONNRESET' ? 'connection reset (the app crashed or closed it)' : error.message;
      resolve({ kind: 'error', error: text, code: error.code, durationMs: elapsed() });
    });
    req.end(body);
  });
}

export function describeAnswer(answer: Answer): string {
  return answer.kind === 'answer' ? `${answer.status} in ${answer.durationMs} ms` : `${answer.error} after ${answer.durationMs} ms`;
}

export const is2xx = (answer: Answer) => answer.kind === 'answer' && answer.status >= 200 && answer.status < 300;
export const is5xx = (answer: Answer) => answer.kind === 'answer' && answer.status >= 500;
