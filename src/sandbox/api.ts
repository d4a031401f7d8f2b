import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDomainEventType, PING_EVENT_TYPE, sampleData } from '../contract/index.js';
import type { Logger } from '../logger.js';
import { invalidParam, notFound, rateLimited, SandboxError } from './errors.js';
import { DAY_MS, MinuteWindow, PER_KEY_PER_MINUTE, TRIAL_CAPS, usageInLastDay } from './limits.js';
import * as api from './resources.js';
import {
  type AccountRecord,
  type KeyRecord,
  newAccountId,
  newApiKey,
  newRequestId,
  PLANS,
  type Plan,
  SCOPES,
  type SandboxDb,
  type Scope,
} from './state.js';
import { authenticate, forcedError, parseJsonBody, readApiBody, requireScope, ROUTES, send } from './requests.js';
import type { DeliveryWorker } from './worker.js';

/** What the API's routes need of the sandbox's options. */
export interface SandboxApiConfig {
  apiVersion: string;
  logger: Logger;
  maxEvents: number;
  now: () => number;
  timeScale: number;
}

/** The sandbox's REST API: each route of the service's webhook API, on the state in `db`. */
export class SandboxApi {
  readonly #db: SandboxDb;
  readonly #config: SandboxApiConfig;
  readonly #worker: DeliveryWorker;
  readonly #persist: () => Promise<void>;
  readonly #windows = new MinuteWindow();

  constructor(options: {
    db: SandboxDb;
    config: SandboxApiConfig;
    worker: DeliveryWorker;
    persist: () => Promise<void>;
  }) {
    this.#db = options.db;
    this.#config = options.config;
    this.#worker = options.worker;
    this.#persist = options.persist;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = newRequestId();
    res.setHeader('request-id', requestId);
    try {
      const url = new URL(req.url ?? '/', 'http://sandbox');
      const raw = await readApiBody(req);
      const forced = forcedError(req);
      if (forced) throw forced;
      if (url.pathname === '/sandbox/health' && req.method === 'GET') {
        send(res, 200, { ok: true, apiVersion: this.#config.apiVersion, timeScale: this.#config.timeScale });
        return;
      }
      const result = url.pathname.startsWith('/sandbox/')
        ? await this.#handleAdmin(req, url, raw)
        : await this.#handleApi(req, url, raw);
      send(res, result.status, result.body);
    } catch (error) {
      const failure = error instanceof SandboxError ? error : this.#internal(error);
      const headers: Record<string, string> =
        failure.extra.retryAfter === undefined ? {} : { 'retry-after': String(failure.extra.retryAfter) };
      send(res, failure.status, failure.body(requestId), headers);
    }
  }

  #internal(error: unknown): SandboxError {
    this.#config.logger.error(`sandbox: unexpected failure: ${error instanceof Error ? error.stack : String(error)}`);
    return new SandboxError(500, 'api_error', 'internal_error', 'An unexpected failure in the sandbox.');
  }

  #routeContext(key: KeyRecord, url: URL, body: Record<string, unknown>): api.RouteContext {
    const data = this.#db.data;
    const account = data.accounts.find((a) => a.id === key.account) as AccountRecord;
    return {
      data,
      account: key.account,
      plan: account.plan,
      body,
      query: url.searchParams,
      now: this.#config.now(),
      apiVersion: this.#config.apiVersion,
      maxEvents: this.#config.maxEvents,
      deliver: (event, endpoints) => this.#worker.enqueue(event, endpoints),
      cancelDeliveries: (endpointId) => this.#worker.cancelForEndpoint(endpointId),
    };
  }

  #enforceRateLimits(key: KeyRecord, plan: Plan): void {
    const at = this.#config.now();
    const keyWait = this.#windows.take(`key:${key.key}`, PER_KEY_PER_MINUTE, at);
    if (keyWait > 0)
      throw rateLimited(
        'rate_limit_exceeded',
        `This key made ${PER_KEY_PER_MINUTE} requests in the last minute.`,
        keyWait,
      );
    const accountWait = this.#windows.take(`account:${key.account}`, PLANS[plan], at);
    if (accountWait > 0) {
      throw rateLimited(
        'account_rate_limit_exceeded',
        `The account's ${plan} plan allows ${PLANS[plan]} requests per minute.`,
        accountWait,
      );
    }
  }

  async #handleApi(req: IncomingMessage, url: URL, raw: Buffer): Promise<api.RouteResult> {
    const data = this.#db.data;
    const route = ROUTES.find((r) => r.method === req.method && r.pattern.test(url.pathname));
    if (!route) throw notFound(`route ${req.method} ${url.pathname}`);
    const key = authenticate(req, data);
    requireScope(key, route.scope);
    const ctx = this.#routeContext(key, url, {});
    this.#enforceRateLimits(key, ctx.plan as Plan);

    const idempotencyKey = route.write ? req.headers['idempotency-key'] : undefined;
    const scope = `${key.key}:${idempotencyKey}`;
    const fingerprint = `${req.method} ${url.pathname} ${raw.toString('base64')}`;
    if (typeof idempotencyKey === 'string') {
      const cached = data.idempotency.find((r) => r.scope === scope && r.at > this.#config.now() - DAY_MS);
      if (cached) {
        if (cached.fingerprint !== fingerprint) {
          throw invalidParam(
            'Idempotency-Key',
            'this Idempotency-Key was used with a different request; use a new key for a new request',
          );
        }
        return { status: cached.status, body: cached.body };
      }
    }
    if (
      route.write &&
      ctx.plan === 'trial' &&
      usageInLastDay(data.usage, key.account, 'write', ctx.now) >= TRIAL_CAPS.writesPerDay
    ) {
      throw new SandboxError(
        429,
        'rate_limit_error',
        'trial_daily_writes_exceeded',
        `Trial accounts may make ${TRIAL_CAPS.writesPerDay} write requests per rolling 24 hours.`,
      );
    }
    ctx.body = parseJsonBody(raw);
    const result = route.handler(ctx, route.pattern.exec(url.pathname)?.[1] ?? '');
    if (route.write) {
      data.usage = data.usage.filter((u) => u.at > ctx.now - DAY_MS);
      data.usage.push({ account: key.account, kind: 'write', at: ctx.now });
      if (typeof idempotencyKey === 'string') {
        data.idempotency = data.idempotency.filter((r) => r.at > ctx.now - DAY_MS);
        data.idempotency.push({ scope, fingerprint, status: result.status, body: result.body, at: ctx.now });
      }
      await this.#persist();
    }
    return result;
  }

  async #handleAdmin(req: IncomingMessage, url: URL, raw: Buffer): Promise<api.RouteResult> {
    const key = authenticate(req, this.#db.data);
    if (!SCOPES.every((scope) => key.scopes.includes(scope))) {
      throw new SandboxError(
        403,
        'authorization_error',
        'insufficient_permissions',
        'Sandbox admin routes need a full-scope key.',
      );
    }
    const body = parseJsonBody(raw);
    if (req.method === 'POST' && url.pathname === '/sandbox/keys') return this.#createKey(body);
    if (req.method === 'POST' && url.pathname === '/sandbox/events') {
      const result = this.#emitDomainEvent(this.#routeContext(key, url, body));
      await this.#persist();
      return result;
    }
    throw notFound(`route ${req.method} ${url.pathname}`);
  }

  #createKey(body: Record<string, unknown>): api.RouteResult {
    const data = this.#db.data;
    const createdAt = new Date(this.#config.now()).toISOString();
    const { plan, scopes = [...SCOPES], account } = body;
    if (plan !== undefined && !(typeof plan === 'string' && plan in PLANS)) {
      throw invalidParam('plan', `plan must be one of ${Object.keys(PLANS).join(', ')}`);
    }
    if (
      !Array.isArray(scopes) ||
      scopes.length === 0 ||
      scopes.some((s) => !(SCOPES as readonly unknown[]).includes(s))
    ) {
      throw invalidParam('scopes', `scopes must be a non-empty list from ${SCOPES.join(', ')}`);
    }
    let record: AccountRecord | undefined;
    if (account !== undefined) {
      record = data.accounts.find((a) => a.id === account);
      if (!record) throw notFound(`account ${String(account)}`);
      if (plan !== undefined && plan !== record.plan) {
        throw invalidParam('plan', `account ${record.id} is on the ${record.plan} plan; omit plan to add a key to it`);
      }
    } else {
      record = { id: newAccountId(), plan: (plan as Plan | undefined) ?? 'pro', createdAt };
      data.accounts.push(record);
    }
    const key: KeyRecord = { key: newApiKey(), account: record.id, scopes: [...new Set(scopes as Scope[])], createdAt };
    data.keys.push(key);
    return { status: 201, body: { apiKey: key.key, account: record.id, plan: record.plan, scopes: key.scopes } };
  }

  #emitDomainEvent(ctx: api.RouteContext): api.RouteResult {
    const { type, data } = ctx.body;
    if (typeof type !== 'string' || !isDomainEventType(type)) {
      const hint = type === PING_EVENT_TYPE ? ' Pings come from POST /webhookEndpoint/{id}/ping.' : '';
      throw invalidParam('type', `type must be a catalogue event type (see npx clockhook trigger --help).${hint}`);
    }
    if (data !== undefined && (typeof data !== 'object' || data === null || Array.isArray(data))) {
      throw invalidParam('data', 'data must be a JSON object (the resource)');
    }
    const event = api.createEvent(ctx, type, (data as Record<string, unknown> | undefined) ?? sampleData(type));
    this.#worker.enqueue(event, api.subscribedEndpoints(ctx, type));
    return { status: 201, body: api.eventJson(event) };
  }
}
