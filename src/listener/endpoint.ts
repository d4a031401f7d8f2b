import { readFile } from 'node:fs/promises';
import { type ApiClient, ApiError, type EndpointPatch } from '../api/index.js';
import type { WebhookEndpoint } from '../contract/index.js';
import type { Logger } from '../logger.js';
import { writePrivateFile } from '../store/index.js';

/**
 * Endpoints listen creates carry one of these descriptions, so a later run recognizes them and whoever
 * lists the endpoints can tell what will become of them.
 */
export const ENDPOINT_DESCRIPTION = 'clockhook listen (created automatically; deleted when it exits)';
export const KEPT_ENDPOINT_DESCRIPTION = 'clockhook listen (created automatically; kept for its next run)';
/**
 * An API base this folder's sandbox may have had: it listens on this machine (an embedded one's records
 * carry the port asked for, 0 included), on whatever port it was given.
 */
export const isSandboxBase = (apiBase: string) =>
  /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]|0\.0\.0\.0|\[::\]):\d+$/.test(apiBase);

/** An API base as the API client spells it (`https://api.example.com/` and `…com` are one API). */
const baseOf = (apiBase: string) => (URL.canParse(apiBase) ? new URL(apiBase).href.replace(/\/+$/, '') : apiBase);

/** Whether two API bases, as given or as filed, name the same API. */
export const sameBase = (a: string, b: string) => baseOf(a) === baseOf(b);

const isListenEndpoint = (endpoint: WebhookEndpoint) =>
  endpoint.description === ENDPOINT_DESCRIPTION || endpoint.description === KEPT_ENDPOINT_DESCRIPTION;

/** `.clockhook/endpoints.json`: endpoints listen registered, with the secret only the create response had. */
export interface EndpointRecordOnFile {
  apiBase: string;
  url: string;
  id: number;
  secret: string;
  createdAt: string;
  /**
   * The URL of the listener the endpoint delivers to, when the endpoint's own URL is elsewhere (a relay's
   * channel): a later run of that listener finds its endpoint by it, and moves it back. Sandbox only.
   */
  listener?: string;
}

export interface RegisteredEndpoint {
  endpoint: WebhookEndpoint;
  secret: string;
  /** Whether this run may delete it on exit (it or an earlier run of listen created it). */
  owned: boolean;
  /**
   * What `clockhook secret` needs to pick this endpoint's record from the others on file (its id, or its
   * URL when another record has the same id on another API); null when it is the only record.
   */
  recordName: string | null;
}

/** The argument that picks `record` among `records` for `clockhook secret`; null when there is no other. */
function recordName(records: EndpointRecordOnFile[], record: EndpointRecordOnFile): string | null {
  const others = records.filter((r) => r !== record);
  if (others.length === 0) return null;
  return others.some((r) => r.id === record.id) ? record.url : String(record.id);
}

/** `.clockhook/endpoints.json` exists but cannot be read as the records listen wrote. */
export class EndpointRecordsError extends Error {
  override readonly name = 'EndpointRecordsError';
}

const isRecord = (value: unknown): value is EndpointRecordOnFile => {
  const r = value as Partial<EndpointRecordOnFile> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.apiBase === 'string' &&
    typeof r.url === 'string' &&
    Number.isInteger(r.id) &&
    typeof r.secret === 'string'
  );
};

/**
 * The records in `.clockhook/endpoints.json`; none when it does not exist. One that cannot be read (a
 * hand edit gone wrong) is an error, not "none": taken as empty, it would be overwritten, and listen
 * would delete the endpoints whose secrets it held and make new ones, so the app's secret stops working.
 */
export async function readEndpointRecords(path: string): Promise<EndpointRecordOnFile[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw recordsError(path, (error as Error).message);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw recordsError(path, `it is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(value)) throw recordsError(path, 'it does not hold a list');
  const bad = value.findIndex((entry) => !isRecord(entry));
  if (bad !== -1) throw recordsError(path, `entry ${bad + 1} lacks its apiBase, url, id or secret`);
  return value as EndpointRecordOnFile[];
}

const recordsError = (path: string, why: string) =>
  new EndpointRecordsError(
    `cannot read ${path} (${why}). It holds the secrets of the endpoints clockhook listen registered, which the service shows nowhere else: mend it, or move it aside, and listen then registers new endpoints, with new secrets for your app.`,
  );

const writeRecords = (path: string, records: EndpointRecordOnFile[]) =>
  writePrivateFile(path, `${JSON.stringify(records, null, 2)}\n`);

async function allEndpoints(client: ApiClient): Promise<WebhookEndpoint[]> {
  return (await client.listEndpoints({ limit: Number.POSITIVE_INFINITY })).data;
}

/** Whether two records, read at different times, are the same one. */
const sameRecord = (a: EndpointRecordOnFile, b: EndpointRecordOnFile) =>
  a.apiBase === b.apiBase && a.id === b.id && a.url === b.url;

const sameEvents = (a: string[], b: string[]) => a.length === b.length && a.every((type) => b.includes(type));

/**
 * Registers an endpoint for `url`, reusing the one an earlier run created when its secret is on
 * file; an earlier one of ours without a secret on file is deleted and created again (so a restart
 * after a crash works). Endpoints listen did not create are never touched.
 */
export async function registerEndpoint(options: {
  client: ApiClient;
  /** The API base the record goes under. @default client.baseUrl */
  apiBase?: string;
  url: string;
  events: string[];
  /** Whether this run leaves the endpoint for the next one, which its description then says. */
  kept: boolean;
  /**
   * Whether an earlier run's endpoint may be moved here when none is on file for `url` itself, keeping
   * its secret (the sandbox's endpoint of this listener's port, under another --path or at a relay).
   */
  movable?: (record: EndpointRecordOnFile) => boolean;
  /** This listener's own URL, filed with a record whose `url` is elsewhere (see EndpointRecordOnFile). */
  listener?: string;
  /**
   * Whether records filed under another API base are of this same API: this folder's sandbox is one API
   * on whatever port it ran (`clockhook sandbox --port 4310` one day, listen's embedded one the next), as
   * its state file is the same. Its endpoint's record is then found, and filed again under `apiBase`.
   */
  sameApi?: (apiBase: string) => boolean;
  recordsPath: string;
  logger: Logger;
}): Promise<RegisteredEndpoint> {
  const { client, url, events, recordsPath, logger } = options;
  const apiBase = options.apiBase ?? client.baseUrl;
  const description = options.kept ? KEPT_ENDPOINT_DESCRIPTION : ENDPOINT_DESCRIPTION;
  const records = await readEndpointRecords(recordsPath);
  const isOurs = (r: EndpointRecordOnFile) => sameBase(r.apiBase, apiBase) || options.sameApi?.(r.apiBase) === true;
  const ours = records.filter(isOurs);
  const filed = (record: EndpointRecordOnFile): EndpointRecordOnFile => {
    const { listener: _elsewhere, ...rest } = record;
    return options.listener === undefined || options.listener === url ? rest : { ...rest, listener: options.listener };
  };
  // The records the API says are gone, whose secrets open nothing any more (filled by reuseOnFile).
  const gone: EndpointRecordOnFile[] = [];
  const reuse = (candidates: EndpointRecordOnFile[]) =>
    reuseOnFile({
      client,
      url,
      events,
      description,
      apiBase,
      records,
      candidates,
      gone,
      filed,
      recordsPath,
      logger,
    }).catch(async (error: unknown) => {
      throw await explainConflict(error, client, url);
    });
  // The records that may hold this URL's endpoint, best first: filed under this base, then under another
  // base of this API (legacy runs filed one per sandbox port).
  const atUrl = await reuse([
    ...ours.filter((r) => r.url === url && sameBase(r.apiBase, apiBase)),
    ...ours.filter((r) => r.url === url && !sameBase(r.apiBase, apiBase)),
  ]);
  if (atUrl) return atUrl;

  // None: an endpoint of ours still at the URL has lost its secret, so it goes, before one this listener
  // may move here takes the URL, or a new one does.
  for (const stale of await allEndpoints(client)) {
    if (stale.url === url && isListenEndpoint(stale)) {
      logger.warn(
        `Deleting endpoint ${stale.id} for ${url}: an earlier clockhook listen created it and its secret is not on file.`,
      );
      await client.deleteEndpoint(stale.id);
    }
  }
  const moved = await reuse(ours.filter((r) => r.url !== url && options.movable?.(r) === true));
  if (moved) return moved;

  let endpoint: WebhookEndpoint;
  try {
    endpoint = await client.createEndpoint({ url, enabledEvents: events, description });
  } catch (error) {
    throw await explainConflict(error, client, url);
  }
  const secret = endpoint.secret as string;
  const record = filed({ apiBase, url, id: endpoint.id, secret, createdAt: new Date().toISOString() });
  // Records of this API for the URL whose endpoint is gone (or no longer points there) go with it, as do
  // those the API said are gone.
  const recordsNow = await putRecord(
    recordsPath,
    record,
    (r) => (isOurs(r) && r.url === url) || gone.some((g) => sameRecord(r, g)),
  );
  const { secret: _hidden, ...visible } = endpoint;
  return { endpoint: visible as WebhookEndpoint, secret, owned: true, recordName: recordName(recordsNow, record) };
}

/** A 409 for `url` (someone's own endpoint is there), said with what to do; any other error as it is. */
async function explainConflict(error: unknown, client: ApiClient, url: string): Promise<unknown> {
  if (!(error instanceof ApiError && error.code === 'idempotency_conflict')) return error;
  const existing = (await allEndpoints(client)).find((e) => e.url === url);
  return new ApiError({
    status: error.status,
    type: error.type,
    code: error.code,
    message: `An endpoint for ${url} exists already${existing ? ` (id ${existing.id})` : ''} and clockhook did not create it. Use it with --endpoint ${existing?.id ?? '<id>'} --secret whsec_…, or delete it.`,
    requestId: error.requestId,
    method: error.method,
    url: error.url,
  });
}

/**
 * The endpoint of the first of `candidates` that the API still has at the URL on file, brought up to date
 * (URL, events, description) and filed under `apiBase`; null when there is none. The records whose
 * endpoint the API says no longer exists are added to `gone`, and leave the file with the one put there.
 */
async function reuseOnFile(context: {
  client: ApiClient;
  url: string;
  events: string[];
  description: string;
  apiBase: string;
  records: EndpointRecordOnFile[];
  candidates: EndpointRecordOnFile[];
  gone: EndpointRecordOnFile[];
  /** A record as it is filed now (its listener, when its URL is elsewhere). */
  filed: (record: EndpointRecordOnFile) => EndpointRecordOnFile;
  recordsPath: string;
  logger: Logger;
}): Promise<RegisteredEndpoint | null> {
  const { client, url, events, description, apiBase, records, candidates, gone, filed, recordsPath, logger } = context;
  const endpointOf = async (record: EndpointRecordOnFile) => {
    try {
      return await client.getEndpoint(record.id);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'resource_not_found')) throw error;
      gone.push(record);
      return null;
    }
  };

  for (const onFile of candidates) {
    let endpoint = await endpointOf(onFile);
    if (endpoint?.url !== onFile.url) continue;
    const patch: EndpointPatch = {
      ...(endpoint.url !== url ? { url } : {}),
      ...(sameEvents(endpoint.enabledEvents, events) ? {} : { enabledEvents: events }),
      ...(isListenEndpoint(endpoint) && endpoint.description !== description ? { description } : {}),
    };
    if (Object.keys(patch).length > 0) endpoint = await client.updateEndpoint(endpoint.id, patch);
    // Another record of this API for the URL is an older one, from before records were found across
    // sandbox ports: it goes once the API says its endpoint is gone (one it still has is left alone).
    for (const other of candidates)
      if (other !== onFile && other.url === url && !gone.includes(other)) await endpointOf(other);
    // A record reused at its own URL keeps the listener it names (a relay's endpoint used by a run on
    // another port is still that port's); a moved one names this listener.
    const record = onFile.url === url ? { ...onFile, apiBase } : filed({ ...onFile, apiBase, url });
    let recordsNow = records.map((r) => (r === onFile ? record : r)).filter((r) => !gone.includes(r));
    if (onFile.url !== url || onFile.apiBase !== apiBase || gone.length > 0) {
      recordsNow = await putRecord(
        recordsPath,
        record,
        (r) => sameRecord(r, onFile) || gone.some((g) => sameRecord(r, g)),
      );
    }
    if (onFile.url !== url)
      logger.info(`Endpoint ${endpoint.id} now points at ${url} (it was ${onFile.url}); its secret is the same.`);
    return { endpoint, secret: onFile.secret, owned: true, recordName: recordName(recordsNow, record) };
  }
  return null;
}

/**
 * Puts `record` on file in place of the one `replaces` picks, over the records as they are now: another
 * listen of this folder (another port, another --db) may have written its own while this one talked to
 * the API, and the records read before that would lose it, and with it a secret the service shows nowhere.
 */
async function putRecord(
  recordsPath: string,
  record: EndpointRecordOnFile,
  replaces: (r: EndpointRecordOnFile) => boolean,
): Promise<EndpointRecordOnFile[]> {
  const recordsNow = [...(await readEndpointRecords(recordsPath)).filter((r) => !replaces(r)), record];
  await writeRecords(recordsPath, recordsNow);
  return recordsNow;
}

/** Deletes an endpoint listen registered and forgets its secret. An already-deleted one is fine. */
export async function releaseEndpoint(options: {
  client: ApiClient;
  apiBase?: string;
  id: number;
  recordsPath: string;
}): Promise<void> {
  const { client, id, recordsPath } = options;
  const apiBase = options.apiBase ?? client.baseUrl;
  try {
    await client.deleteEndpoint(id);
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 'resource_not_found')) throw error;
  }
  await forgetEndpointRecords(recordsPath, (r) => sameBase(r.apiBase, apiBase) && r.id === id);
}

/** Forgets the records `matches` picks, and with them their secrets; says how many there were. */
export async function forgetEndpointRecords(
  recordsPath: string,
  matches: (record: EndpointRecordOnFile) => boolean,
): Promise<number> {
  const records = await readEndpointRecords(recordsPath);
  const kept = records.filter((r) => !matches(r));
  if (kept.length !== records.length) await writeRecords(recordsPath, kept);
  return records.length - kept.length;
}

/**
 * The status the watch gives an endpoint the API no longer has: not one of the service's (the contract
 * lists enabled and disabled), but what listen and its page say of it.
 */
export const DELETED = 'deleted';

export interface EndpointWatchOptions {
  client: ApiClient | null;
  endpoint: WebhookEndpoint | null;
  logger: Logger;
  now: () => number;
  /** How long after a failed delivery to read the endpoint: the service updates it once the attempt is over. @default 2000 */
  settleMs?: number;
  /** Reads at most this often, so a burst of failures costs one request, not one each. @default 30000 */
  minIntervalMs?: number;
}

/**
 * The endpoint as this run last read it. The service disables an endpoint after 10 failed deliveries in
 * a row and then sends it nothing, which a developer at a terminal would otherwise learn only from the
 * silence. So a failed delivery has the endpoint read again a moment later, and a change of its status is
 * logged, whoever saw it: that read, the inspector's poll, or its Re-enable button.
 */
export class EndpointWatch {
  readonly #options: EndpointWatchOptions;
  #current: WebhookEndpoint | null;
  #timer: NodeJS.Timeout | null = null;
  #lastReadAt = Number.NEGATIVE_INFINITY;
  /** Ends a read in flight at close, so that its retries do not outlive the run. */
  readonly #closing = new AbortController();

  constructor(options: EndpointWatchOptions) {
    this.#options = options;
    this.#current = options.endpoint;
  }

  get current(): WebhookEndpoint | null {
    return this.#current;
  }

  set(next: WebhookEndpoint): void {
    const before = this.#current;
    this.#current = next;
    if (!before || before.status === next.status) return;
    const { logger } = this.#options;
    if (next.status === DELETED) {
      logger.warn(
        `Endpoint ${next.id} was deleted (npx clockhook endpoints delete, or the service's dashboard): the service sends nothing here any more. Restart listen to register a new one; its secret is new, so give it to your app again.`,
      );
    } else if (next.status === 'disabled') {
      logger.warn(
        `Endpoint ${next.id} is now disabled: the service stops delivering to an endpoint after 10 failed deliveries in a row. Fix what failed, re-enable it (npx clockhook endpoints enable ${next.id}, or Re-enable in the inspector), and send what it missed again with npx clockhook events redeliver <event id>.`,
      );
    } else if (next.status === 'enabled')
      logger.warn(`Endpoint ${next.id} is enabled again; the service delivers to it.`);
    else logger.warn(`Endpoint ${next.id} is now ${next.status} (it was ${before.status}).`);
  }

  /** Reads the endpoint from the API (none to read offline, nor once it was deleted). */
  async read(): Promise<WebhookEndpoint | null> {
    const { client } = this.#options;
    const current = this.#current;
    if (client && current && current.status !== DELETED) {
      this.#lastReadAt = this.#options.now();
      try {
        this.set(await client.getEndpoint(current.id, { signal: this.#closing.signal }));
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'resource_not_found')) throw error;
        // Shown as it was, marked deleted: the page and the log say so, instead of its last status.
        this.set({ ...current, status: DELETED });
      }
    }
    return this.#current;
  }

  /** A delivery was answered with something other than 2xx: the endpoint is read again soon. */
  deliveryFailed(): void {
    if (this.#timer || !this.#options.client || !this.#current || this.#closing.signal.aborted) return;
    const { settleMs = 2000, minIntervalMs = 30_000 } = this.#options;
    const waitMs = Math.max(settleMs, this.#lastReadAt + minIntervalMs - this.#options.now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      // A read that fails (the service unreachable) leaves what was known; the next failure tries again.
      this.read().catch(() => undefined);
    }, waitMs);
    this.#timer.unref();
  }

  close(): void {
    this.#closing.abort();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
