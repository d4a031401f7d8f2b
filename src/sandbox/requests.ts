import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalidParam, rateLimited, SandboxError } from './errors.js';
import * as api from './resources.js';
import { DEFAULT_ACCOUNT, type KeyRecord, newApiKey, SCOPES, type SandboxData, type Scope } from './state.js';
import { MAX_API_REQUEST_BYTES } from '../contract/index.js';

export const MAX_BODY_BYTES = MAX_API_REQUEST_BYTES;
export const FORCEABLE_ERRORS = ['internal_error', 'rate_limit_exceeded', 'account_rate_limit_exceeded'];

type Handler = (ctx: api.RouteContext, id: string) => api.RouteResult;
export interface Route {
  method: string;
  pattern: RegExp;
  scope: Scope;
  write: boolean;
  handler: Handler;
}

/** The contract's Endpoints table, with DESIGN.md's scope for each operation. */
export const ROUTES: Route[] = [
  { method: 'GET', pattern: /^\/webhookEndpoint$/, scope: 'webhooks:read', write: false, handler: api.listEndpoints },
  { method: 'POST', pattern: /^\/webhookEndpoint$/, scope: 'webhooks:write', write: true, handler: api.createEndpoint },
  {
    method: 'GET',
    pattern: /^\/webhookEndpoint\/([^/]+)$/,
    scope: 'webhooks:read',
    write: false,
    handler: api.getEndpoint,
  },
  {
    method: 'POST',
    pattern: /^\/webhookEndpoint\/([^/]+)$/,
    scope: 'webhooks:write',
    write: true,
    handler: api.updateEndpoint,
  },
  {
    method: 'DELETE',
    pattern: /^\/webhookEndpoint\/([^/]+)$/,
    scope: 'webhooks:write',
    write: true,
    handler: api.deleteEndpoint,
  },
  {
    method: 'POST',
    pattern: /^\/webhookEndpoint\/([^/]+)\/ping$/,
    scope: 'webhooks:write',
    write: true,
    handler: api.pingEndpoint,
  },
  { method: 'GET', pattern: /^\/event$/, scope: 'events:read', write: false, handler: api.listEvents },
  { method: 'GET', pattern: /^\/event\/([^/]+)$/, scope: 'events:read', write: false, handler: api.getEvent },
  {
    method: 'POST',
    pattern: /^\/event\/([^/]+)\/redeliver$/,
    scope: 'events:write',
    write: true,
    handler: api.redeliverEvent,
  },
];

export function ensureDefaultAccount(data: SandboxData, now: number): KeyRecord {
  const createdAt = new Date(now).toISOString();
  if (!data.accounts.some((a) => a.id === DEFAULT_ACCOUNT)) {
    data.accounts.push({ id: DEFAULT_ACCOUNT, plan: 'pro', createdAt });
  }
  let key = data.keys.find((k) => k.account === DEFAULT_ACCOUNT && k.scopes.length === SCOPES.length);
  if (!key) {
    key = { key: newApiKey(), account: DEFAULT_ACCOUNT, scopes: [...SCOPES], createdAt };
    data.keys.push(key);
  }
  return key;
}

/** The body of a request to the sandbox API, refused past its limit. */
export async function readApiBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw invalidParam('body', `the request body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function parseJsonBody(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidParam('body', 'the request body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidParam('body', 'the request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

export function authenticate(req: IncomingMessage, data: SandboxData): KeyRecord {
  const authorization = req.headers.authorization;
  if (authorization === undefined) {
    // DESIGN.md: any *subscription-key* header without a bearer header is the older style.
    if (Object.keys(req.headers).some((name) => name.includes('subscription-key'))) {
      throw new SandboxError(
        401,
        'authentication_error',
        'legacy_key_unsupported',
        'The subscription-key header is no longer accepted. Send "Authorization: Bearer <API key>".',
      );
    }
    throw new SandboxError(
      401,
      'authentication_error',
      'api_key_invalid',
      'No API key: send "Authorization: Bearer <API key>".',
    );
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  const key = match ? data.keys.find((k) => k.key === match[1]) : undefined;
  if (!key)
    throw new SandboxError(
      401,
      'authentication_error',
      'api_key_invalid',
      'The API key is malformed, unknown or revoked.',
    );
  return key;
}

export function requireScope(key: KeyRecord, scope: Scope): void {
  if (!key.scopes.includes(scope)) {
    throw new SandboxError(
      403,
      'authorization_error',
      'insufficient_permissions',
      `This API key lacks the ${scope} permission.`,
    );
  }
}

export function forcedError(req: IncomingMessage): SandboxError | null {
  const value = req.headers['sandbox-force-error'];
  if (value === undefined) return null;
  switch (value) {
    case 'internal_error':
      return new SandboxError(
        500,
        'api_error',
        'internal_error',
        'Forced by Sandbox-Force-Error: an unexpected server-side failure.',
      );
    case 'rate_limit_exceeded':
    case 'account_rate_limit_exceeded':
      return rateLimited(value, `Forced by Sandbox-Force-Error: ${value}.`, 1);
    default:
      return invalidParam('Sandbox-Force-Error', `Sandbox-Force-Error must be one of ${FORCEABLE_ERRORS.join(', ')}`);
  }
}

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** The sandbox's HTTP side: each request authenticated, limited and routed to the contract's operations. */
