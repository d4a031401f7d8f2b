import { type ApiClient, ApiError } from '../api/index.js';
import type { WebhookEndpoint } from '../contract/index.js';
import type { Logger } from '../logger.js';
import { chooseEndpoint, type EndpointChoiceInput, filedRecord, isOfApi, type ReuseChoice } from './endpoint-choice.js';
import { ENDPOINT_DESCRIPTION, KEPT_ENDPOINT_DESCRIPTION, recordName, sameBase } from './endpoint-records.js';
import {
  type EndpointRecordOnFile,
  forgetEndpointRecords,
  putEndpointRecord,
  readEndpointRecords,
  sameRecord,
} from '../folder/index.js';

export interface RegisteredEndpoint {
  endpoint: WebhookEndpoint;
  secret: string;
  /**
   * What `clockhook secret` needs to pick this endpoint's record from the others on file (its id, or its
   * URL when another record has the same id on another API); null when it is the only record.
   */
  recordName: string | null;
  /** Whether it existed before this run (reused or moved), so that deliveries may have been missed. */
  existed: boolean;
  /** The records on file once it was filed: what is written back should `.clockhook` be deleted meanwhile. */
  records: EndpointRecordOnFile[];
}

export interface RegisterOptions extends Pick<
  EndpointChoiceInput,
  'url' | 'events' | 'listener' | 'movable' | 'sameApi'
> {
  client: ApiClient;
  /** The API base the record goes under. @default client.baseUrl */
  apiBase?: string;
  /** Whether this run leaves the endpoint for the next one, which its description then says. */
  kept: boolean;
  recordsPath: string;
  logger: Logger;
}

/**
 * Registers an endpoint for `url` as chooseEndpoint decides: the one an earlier run created when its
 * secret is on file, one moved here, or a new one (so a restart after a crash works).
 */
export async function registerEndpoint(options: RegisterOptions): Promise<RegisteredEndpoint> {
  const { client, url, recordsPath, logger } = options;
  const input: EndpointChoiceInput = {
    ...options,
    apiBase: options.apiBase ?? client.baseUrl,
    description: options.kept ? KEPT_ENDPOINT_DESCRIPTION : ENDPOINT_DESCRIPTION,
    records: await readEndpointRecords(recordsPath),
    endpoints: (await client.listEndpoints({ limit: Number.POSITIVE_INFINITY })).data,
  };
  const choice = chooseEndpoint(input);
  const leaves = (r: EndpointRecordOnFile) => choice.gone.some((g) => sameRecord(r, g));
  try {
    if (choice.action === 'reuse') return await reuse(input, choice, leaves, options);
    for (const stale of choice.remove) {
      logger.warn(
        `Deleting endpoint ${stale.id} for ${url}: an earlier clockhook listen created it and its secret is not on file.`,
      );
      await client.deleteEndpoint(stale.id);
    }
    if (choice.action === 'move') return await reuse(input, choice, leaves, options);
    const endpoint = await client.createEndpoint({ url, enabledEvents: input.events, description: input.description });
    const secret = endpoint.secret as string;
    const createdAt = new Date().toISOString();
    const record = filedRecord(input, { apiBase: input.apiBase, url, id: endpoint.id, secret, createdAt });
    // Records of this API for the URL (their endpoint is gone, or no longer there) go with it.
    const recordsNow = await putEndpointRecord(
      recordsPath,
      record,
      (r) => (isOfApi(input, r) && r.url === url) || leaves(r),
    );
    const { secret: _hidden, ...visible } = endpoint;
    return {
      endpoint: visible as WebhookEndpoint,
      secret,
      recordName: recordName(recordsNow, record),
      existed: false,
      records: recordsNow,
    };
  } catch (error) {
    throw await explainConflict(error, client, url);
  }
}

/** Brings a reused or moved endpoint up to date, and files its record. */
async function reuse(
  input: EndpointChoiceInput,
  choice: ReuseChoice,
  leaves: (r: EndpointRecordOnFile) => boolean,
  { client, recordsPath, logger }: RegisterOptions,
): Promise<RegisteredEndpoint> {
  const { onFile, record, patch } = choice;
  const endpoint =
    Object.keys(patch).length > 0 ? await client.updateEndpoint(choice.endpoint.id, patch) : choice.endpoint;
  const recordsNow = choice.rewrite
    ? await putEndpointRecord(recordsPath, record, (r) => sameRecord(r, onFile) || leaves(r))
    : input.records.map((r) => (r === onFile ? record : r));
  if (onFile.url !== input.url)
    logger.info(`Endpoint ${endpoint.id} now points at ${input.url} (it was ${onFile.url}); its secret is the same.`);
  return {
    endpoint,
    secret: onFile.secret,
    recordName: recordName(recordsNow, record),
    existed: true,
    records: recordsNow,
  };
}

/** A 409 for `url` (someone's own endpoint is there), said with what to do; any other error as it is. */
async function explainConflict(error: unknown, client: ApiClient, url: string): Promise<unknown> {
  if (!(error instanceof ApiError && error.code === 'idempotency_conflict')) return error;
  const existing = (await client.listEndpoints({ limit: Number.POSITIVE_INFINITY })).data.find((e) => e.url === url);
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
