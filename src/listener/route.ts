import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerError } from '../http/index.js';
import { newCaptureId } from '../store/index.js';
import type { Advisor } from './advice.js';
import { pathUnderBase } from './target.js';

/** Step "route": the request's path under --path, or null once it is answered 404 or 405. */
export function routeRequest(
  req: IncomingMessage,
  res: ServerResponse,
  basePath: string,
  advisor: Advisor,
): string | null {
  const requestPath = req.url ?? '/';
  const relative = pathUnderBase(requestPath, basePath);
  if (relative === null) {
    const path = requestPath.split('?')[0];
    const message = `clockhook listens for deliveries under ${basePath}; ${path} is outside it.`;
    answerError(res, 404, 'not_found', message, { requestId: newCaptureId() });
    req.resume();
    if (req.method === 'POST') advisor.outsidePath(path);
    return null;
  }
  if (req.method !== 'POST') {
    // The service only ever POSTs; anything else is a browser or a scanner, not a delivery.
    const message = `Webhook deliveries are POSTs; ${req.method} is not captured.`;
    answerError(res, 405, 'method_not_allowed', message, { requestId: newCaptureId(), headers: { allow: 'POST' } });
    req.resume();
    return null;
  }
  return relative;
}
