import { randomUUID } from 'node:crypto';
import {
  type DeletedEndpoint,
  type DeliveryAttempt,
  type EventRecord,
  isErrorEnvelope,
  LIST_PAGE,
  type ListPage,
  type PingAcknowledgement,
  RETRYABLE_RATE_LIMIT_CODES,
  type RedeliveryAcknowledgement,
  type WebhookEndpoint,
} from '../contract/index.js';
import { type Logger, silentLogger } from '../logger.js';
import { realSleep } from '../sleep.js';
import { badPortProblem } from '../http/index.js';
import { ApiError } from './error.js';
import { OptionError } from '../errors.js';

export interface ApiClientOptions {
  /** The service's base URL (`CLOCKHOOK_API_BASE`), or a sandbox's. */
  baseUrl: string;
  /** Bearer key (`CLOCKHOOK_API_KEY`). */
  apiKey: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** @default setTimeout-based sleep */
  sleep?: (ms: number) => Promise<void>;
  /** Told about each retry. @default silent */
  logger?: Logger;
  /** Per-request time-out in milliseconds. @default 30 s */
  timeoutMs?: number;
  /** Retries after api_error 500, bare 502/503 and network errors, waiting 1, 2, 4 s. @default 3 */
  maxServerRetries?: number;
  /** Retries after a retryable 429, each waiting Retry-After doubled per repeat. @default 4 */
  maxRateLimitRetries?: number;
}

const API_CLIENT_DEFAULTS = {
  fetch: ((input, init) => globalThis.fetch(input, init)) as typeof fetch,
  sleep: realSleep as (ms: number) => Promise<void>,
  logger: silentLogger as Logger,
  timeoutMs: 30 * 1000,
  maxServerRetries: 3,
  maxRateLimitRetries: 4,
};

/** The options over their defaults (an undefined field takes the default), as the listener's listenerConfig. */
function apiClientConfig(options: ApiClientOptions): ApiClientOptions & typeof API_CLIENT_DEFAULTS {
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return Object.assign({}, API_CLIENT_DEFAULTS, given) as ApiClientOptions & typeof API_CLIENT_DEFAULTS;
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  /** Ends the call, and its retries, with the signal's reason. */
  signal?: AbortSignal;
}

export interface EndpointInput {
  url: string;
  /** Event types, or `['*']`. */
  enabledEvents: string[];
  description?: string;
}

export interface EndpointPatch {
  url?: string;
  enabledEvents?: string[];
  description?: string;
  status?: 'enabled' | 'disabled';
}

export interface ListQuery {
  limit?: number;
  cursor?: string;
}

const SERVER_RETRY_BASE_MS = 1000;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** The contract names the subscription both `eventTypes` and `enabledEvents`: accept either. */
export function normalizeEndpoint(raw: unknown): WebhookEndpoint {
  const { eventTypes, enabledEvents, ...rest } = raw as WebhookEndpoint & { eventTypes?: string[] };
  return { ...rest, enabledEvents: enabledEvents ?? eventTypes ?? [] };
}

/**
 * Why `value` cannot be the base URL of the API (the service's or a sandbox's), or null when it can: its
 * paths are appended to it, so it is an http(s) URL without a query or fragment.
 */
export function apiBaseProblem(value: string): string | null {
  if (!URL.canParse(value)) return `${JSON.stringify(value)} is not a URL`;
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${JSON.stringify(value)} is not an http(s) URL`;
  if (url.search || url.hash || /[?#]/.test(value)) return `${JSON.stringify(value)} has a query or fragment`;
  const badPort = badPortProblem(url);
  return badPort ? `${JSON.stringify(value)} ${badPort}` : null;
}

/**
 * One delivery attempt. The contract does not show the field names inside an entry: the sandbox's are
 * camelCase, and a service may well use snake_case, so both are read; an endpoint given as an object
 * is named by its id, and a time in Unix seconds (as the envelope's `created`) becomes an ISO date.
 * Fields it does not know are kept as they came.
 */
export function normalizeAttempt(raw: unknown): DeliveryAttempt {
  const entry = (raw ?? {}) as Record<string, unknown>;
  const pick = (...names: string[]) =>
    names.map((name) => entry[name]).find((value) => value !== undefined && value !== null);
  const endpoint = pick('endpointId', 'endpoint_id', 'endpoint');
  const at = pick('createdAt', 'created_at', 'attemptedAt', 'attempted_at', 'created');
  return {
    ...entry,
    attempt: pick('attempt', 'attemptNumber', 'attempt_number') as number,
    endpointId: (typeof endpoint === 'object'
      ? ((endpoint as { id?: unknown; url?: unknown }).id ?? (endpoint as { url?: unknown }).url)
      : endpoint) as number,
    statusCode: (pick('statusCode', 'status_code', 'responseStatus', 'response_status') ?? null) as number | null,
    responseBody: (pick('responseBody', 'response_body', 'body') ?? '') as string,
    durationMs: pick('durationMs', 'duration_ms', 'duration') as number,
    error: (pick('error', 'errorMessage', 'error_message') ?? null) as string | null,
    createdAt: (typeof at === 'number' ? new Date(at * 1000).toISOString() : at) as string,
  };
}

/** An event with its attempts read as above; a freshly queued event may have none, or no list at all. */
export function normalizeEvent(raw: unknown): EventRecord {
  const event = raw as EventRecord;
  return { ...event, delivery_attempts: (event.delivery_attempts ?? []).map(normalizeAttempt) };
}

/** A list may be a bare array or wrapped in `data`; the wrapper's fields are not in the contract. */
export function normalizeList<T>(raw: unknown, map: (item: unknown) => T = (item) => item as T): ListPage<T> {
  if (Array.isArray(raw)) return { data: raw.map(map), hasMore: false, nextCursor: null };
  const wrapped = (raw ?? {}) as {
    data?: unknown[];
    hasMore?: boolean;
    has_more?: boolean;
    nextCursor?: string | null;
    next_cursor?: string | null;
  };
  return {
    data: (wrapped.data ?? []).map((item) => map(item)),
    hasMore: wrapped.hasMore ?? wrapped.has_more ?? false,
    nextCursor: wrapped.nextCursor ?? wrapped.next_cursor ?? null,
  };
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/**
 * REST client for the service's webhook API: bearer auth, the contract's error envelope turned into
 * `ApiError`, and the contract's retry strategy. Every write carries one Idempotency-Key for all its
 * attempts, so retrying after a lost response never writes twice.
 */
export class ApiClient {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #logger: Logger;
  readonly #timeoutMs: number;
  readonly #maxServerRetries: number;
  readonly #maxRateLimitRetries: number;

  constructor(options: ApiClientOptions) {
    if (!options?.baseUrl) throw new OptionError('ApiClient: baseUrl is required (the service or sandbox URL).');
    if (!options.apiKey) throw new OptionError('ApiClient: apiKey is required (--api-key or CLOCKHOOK_API_KEY).');
    const problem = apiBaseProblem(options.baseUrl);
    if (problem) throw new OptionError(`ApiClient: baseUrl ${problem}; use e.g. https://api.example.com`);
    this.baseUrl = new URL(options.baseUrl).href.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    const config = apiClientConfig(options);
    this.#fetch = config.fetch;
    this.#sleep = config.sleep;
    this.#logger = config.logger;
    this.#timeoutMs = config.timeoutMs;
    this.#maxServerRetries = config.maxServerRetries;
    this.#maxRateLimitRetries = config.maxRateLimitRetries;
  }

  /** Any call on the API, with auth, error mapping and retries. Resolves to the parsed JSON body. */
  async request<T>(method: string, path: string, { body, query, signal }: RequestOptions = {}): Promise<T> {
    const url = this.#url(path, query);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#apiKey}`,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (WRITE_METHODS.has(method)) headers['idempotency-key'] = randomUUID();
    const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
    const tries = { server: 0, rateLimit: 0 };
    for (;;) {
      signal?.throwIfAborted();
      const sent = await this.#send(url, init, signal);
      if ('cause' in sent) {
        signal?.throwIfAborted();
        // A write whose answer was lost may have happened: only retry it under an Idempotency-Key.
        const retryable = !WRITE_METHODS.has(method) || headers['idempotency-key'] !== undefined;
        if (retryable && tries.server < this.#maxServerRetries) {
          await this.#wait(SERVER_RETRY_BASE_MS * 2 ** tries.server++, method, url, describeCause(sent.cause));
          continue;
        }
        const message = `No response from ${url}: ${describeCause(sent.cause)}`;
        throw new ApiError({ status: 0, type: 'api_error', code: 'connection_failed', message, method, url });
      }
      if (sent.response.ok) return (sent.text === '' ? undefined : parseJson(sent.text)) as T;
      const error = toApiError(sent.response, sent.text, method, url);
      if (isRetryableRateLimit(error) && tries.rateLimit < this.#maxRateLimitRetries) {
        const waitMs = (error.retryAfter ?? 1) * 1000 * 2 ** tries.rateLimit++;
        await this.#wait(waitMs, method, url, `${error.status} ${error.code}`);
        continue;
      }
      if (isTransientServerError(error) && tries.server < this.#maxServerRetries) {
        await this.#wait(SERVER_RETRY_BASE_MS * 2 ** tries.server++, method, url, `${error.status} ${error.code}`);
        continue;
      }
      throw error;
    }
  }

  /** One try: the answer and its text, or why none came (the time limit, or the caller's `signal`). */
  async #send(
    url: string,
    init: { method: string; headers: Record<string, string>; body: string | undefined },
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response; text: string } | { cause: unknown }> {
    // A controller of its own, stopped at the time limit or by the caller's signal. Not `AbortSignal.any`: in
    // Node 20 each one stays listed on the caller's signal (listen's endpoint watch keeps one for hours).
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      this.#timeoutMs,
    );
    timer.unref();
    const stop = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const response = await this.#fetch(url, { ...init, signal: controller.signal });
      return { response, text: await response.text() };
    } catch (cause) {
      return { cause };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    }
  }

  /** Endpoints, newest first; `limit` as for listEvents. */
  listEndpoints(query: ListQuery = {}): Promise<ListPage<WebhookEndpoint>> {
    return this.#readUpTo(query, async (page) =>
      normalizeList(await this.request('GET', '/webhookEndpoint', { query: { ...page } }), normalizeEndpoint),
    );
  }

  async getEndpoint(id: number | string, options: Pick<RequestOptions, 'signal'> = {}): Promise<WebhookEndpoint> {
    return normalizeEndpoint(await this.request('GET', `/webhookEndpoint/${encodeURIComponent(id)}`, options));
  }

  /** Creates an endpoint; the response is the only place its secret is ever shown. */
  async createEndpoint({ url, enabledEvents, description }: EndpointInput): Promise<WebhookEndpoint> {
    return normalizeEndpoint(
      await this.request('POST', '/webhookEndpoint', { body: { url, enabledEvents, description } }),
    );
  }

  async updateEndpoint(id: number | string, patch: EndpointPatch): Promise<WebhookEndpoint> {
    return normalizeEndpoint(await this.request('POST', `/webhookEndpoint/${encodeURIComponent(id)}`, { body: patch }));
  }

  deleteEndpoint(id: number | string): Promise<DeletedEndpoint> {
    return this.request('DELETE', `/webhookEndpoint/${encodeURIComponent(id)}`);
  }

  pingEndpoint(id: number | string): Promise<PingAcknowledgement> {
    return this.request('POST', `/webhookEndpoint/${encodeURIComponent(id)}/ping`);
  }

  /**
   * Events, newest first. A `limit` over a page's maximum (100) is read a page at a time, following
   * nextCursor; `Infinity` reads them all.
   */
  listEvents({ type, ...query }: ListQuery & { type?: string } = {}): Promise<ListPage<EventRecord>> {
    return this.#readUpTo(query, async (page) =>
      normalizeList(await this.request('GET', '/event', { query: { type, ...page } }), normalizeEvent),
    );
  }

  async getEvent(id: string): Promise<EventRecord> {
    return normalizeEvent(await this.request('GET', `/event/${encodeURIComponent(id)}`));
  }

  redeliverEvent(id: string): Promise<RedeliveryAcknowledgement> {
    return this.request('POST', `/event/${encodeURIComponent(id)}/redeliver`);
  }

  /**
   * Up to `limit` items from `cursor` on, read a page of at most LIST_PAGE.maxLimit at a time. hasMore
   * and nextCursor are the last page's, so a next call goes on from there. A page longer than asked
   * for is kept whole: cut, its nextCursor would skip what was cut.
   */
  async #readUpTo<T>(
    { limit, cursor }: ListQuery,
    readPage: (query: ListQuery) => Promise<ListPage<T>>,
  ): Promise<ListPage<T>> {
    if (limit === undefined) return readPage({ cursor });
    const data: T[] = [];
    let page: ListPage<T>;
    do {
      page = await readPage({ limit: Math.min(limit - data.length, LIST_PAGE.maxLimit), cursor });
      data.push(...page.data);
      // An empty page, or one that names the cursor it was read from, would go round for ever.
      if (page.data.length === 0 || page.nextCursor === cursor) break;
      cursor = page.nextCursor ?? undefined;
    } while (data.length < limit && page.hasMore && cursor !== undefined);
    return { ...page, data };
  }

  #url(path: string, query: RequestOptions['query']): string {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
    }
    return url.href;
  }

  async #wait(ms: number, method: string, url: string, why: string): Promise<void> {
    this.#logger.warn(`[${method}] ${url}: ${why}; retrying in ${ms / 1000} s`);
    await this.#sleep(ms);
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as Error & { cause?: { code?: string; message?: string } }).cause;
    if (cause.name === 'TimeoutError') return 'timed out';
    // fetch's own refusal, before any connection: a port browsers block (such as 9, 6000 or 6667).
    if (inner?.message === 'bad port')
      return 'fetch refuses to connect to that port (one browsers block, such as 9, 6000 or 6667); run it on another port';
    return inner?.code ?? inner?.message ?? cause.message;
  }
  return String(cause);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toApiError(response: Response, text: string, method: string, url: string): ApiError {
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  const body = parseJson(text);
  if (isErrorEnvelope(body)) {
    return new ApiError({
      ...body.error,
      requestId: body.error.requestId ?? response.headers.get('request-id') ?? undefined,
      status: response.status,
      method,
      url,
      retryAfter,
    });
  }
  // Not the service's envelope: a proxy's HTML page, an empty 503 from a load balancer, ...
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 120);
  return new ApiError({
    status: response.status,
    type: response.status >= 500 ? 'api_error' : 'invalid_request_error',
    code: `http_${response.status}`,
    message: `${response.status} ${response.statusText || 'error'} without the service's JSON error body${snippet ? ` (got: ${snippet})` : ''}. A proxy or gateway between you and the service answered.`,
    method,
    url,
    retryAfter,
  });
}

function isRetryableRateLimit(error: ApiError): boolean {
  return error.status === 429 && (RETRYABLE_RATE_LIMIT_CODES as readonly string[]).includes(error.code);
}

/** api_error 500, and 502/503 from infrastructure, are transient (contract: Retry strategy). */
function isTransientServerError(error: ApiError): boolean {
  return (error.status === 500 && error.type === 'api_error') || error.status === 502 || error.status === 503;
}
