import type { EndpointPatch } from '../api/index.js';
import type { WebhookEndpoint } from '../contract/index.js';
import { isListenEndpoint, sameBase } from './endpoint-records.js';
import { type EndpointRecordOnFile } from '../folder/index.js';

/** What listen knows when it picks its endpoint: the records on file, what the API has, what it wants. */
export interface EndpointChoiceInput {
  records: EndpointRecordOnFile[];
  /** Every endpoint the API has (listEndpoints, all pages). */
  endpoints: WebhookEndpoint[];
  /** The API base records go under. */
  apiBase: string;
  /** The URL the endpoint is for. */
  url: string;
  events: string[];
  /** The description this run's endpoint carries (see ENDPOINT_DESCRIPTION). */
  description: string;
  /** This listener's own URL, filed with a record whose `url` is elsewhere (a relay's channel). */
  listener?: string;
  /**
   * Whether an earlier run's endpoint may be moved here when none is on file for `url` itself, keeping
   * its secret (the sandbox's endpoint of this listener's port, under another --path or at a relay).
   */
  movable?: (record: EndpointRecordOnFile) => boolean;
  /**
   * Whether records filed under another API base are of this same API: this folder's sandbox is one API
   * on whatever port it ran, as its state file is the same.
   */
  sameApi?: (apiBase: string) => boolean;
}

/** An endpoint on file that the API still has at the URL on file: reused at `url`, or moved there. */
export interface ReuseChoice {
  action: 'reuse' | 'move';
  onFile: EndpointRecordOnFile;
  endpoint: WebhookEndpoint;
  /** What to change so that it is this run's (URL, events, description); empty when nothing. */
  patch: EndpointPatch;
  /** The record as it is filed from now on. */
  record: EndpointRecordOnFile;
  /** Whether the file must be written (the record changed, or records of gone endpoints leave it). */
  rewrite: boolean;
}

export type EndpointChoice = {
  /** Endpoints of ours at the URL whose secret is not on file: deleted before one is moved or made there. */
  remove: WebhookEndpoint[];
  /** Records whose endpoint the API no longer has: they leave the file with the one put there. */
  gone: EndpointRecordOnFile[];
} & (ReuseChoice | { action: 'create' });

const sameEvents = (a: string[], b: string[]) => a.length === b.length && a.every((type) => b.includes(type));

/** A record as it is filed for this run: with the listener's URL when the endpoint's own is elsewhere. */
export function filedRecord(input: EndpointChoiceInput, record: EndpointRecordOnFile): EndpointRecordOnFile {
  const { listener: _elsewhere, ...rest } = record;
  return input.listener === undefined || input.listener === input.url ? rest : { ...rest, listener: input.listener };
}

/** Whether a record is of this run's API: filed under its base, or under another base of the same API. */
export const isOfApi = (input: EndpointChoiceInput, record: EndpointRecordOnFile) =>
  sameBase(record.apiBase, input.apiBase) || input.sameApi?.(record.apiBase) === true;

/**
 * The first of `candidates` whose endpoint the API still has at the URL on file, as a reuse; the
 * candidates before it whose endpoint is gone are added to `gone`.
 */
function firstReusable(
  input: EndpointChoiceInput,
  candidates: EndpointRecordOnFile[],
  gone: EndpointRecordOnFile[],
): Omit<ReuseChoice, 'action' | 'rewrite'> | null {
  for (const onFile of candidates) {
    const endpoint = input.endpoints.find((e) => e.id === onFile.id);
    if (!endpoint) gone.push(onFile);
    if (endpoint?.url !== onFile.url) continue;
    const { url, events, description, apiBase } = input;
    const patch: EndpointPatch = {
      ...(endpoint.url !== url ? { url } : {}),
      ...(sameEvents(endpoint.enabledEvents, events) ? {} : { enabledEvents: events }),
      ...(isListenEndpoint(endpoint) && endpoint.description !== description ? { description } : {}),
    };
    // A record reused at its own URL keeps the listener it names (a relay's endpoint used by a run on
    // another port is still that port's); a moved one names this listener.
    const record = onFile.url === url ? { ...onFile, apiBase } : filedRecord(input, { ...onFile, apiBase, url });
    return { onFile, endpoint, patch, record };
  }
  return null;
}

/**
 * Which endpoint this run uses, decided from the records on file and what the API has, with no I/O:
 * - reuse: the endpoint on file for the URL (filed under this base first, then under another base of
 *   this API), brought up to date;
 * - move: else an earlier run's endpoint that may move here (`movable`), its secret kept, once the
 *   endpoints of ours at the URL without a secret on file are removed;
 * - create: else a new one, after the same removals.
 * Endpoints listen did not create are never touched.
 */
export function chooseEndpoint(input: EndpointChoiceInput): EndpointChoice {
  const { url, apiBase } = input;
  const ours = input.records.filter((r) => isOfApi(input, r));
  const gone: EndpointRecordOnFile[] = [];
  const atUrl = [
    ...ours.filter((r) => r.url === url && sameBase(r.apiBase, apiBase)),
    ...ours.filter((r) => r.url === url && !sameBase(r.apiBase, apiBase)),
  ];
  const rewriteFor = (reuse: { onFile: EndpointRecordOnFile }) =>
    reuse.onFile.url !== url || reuse.onFile.apiBase !== apiBase || gone.length > 0;
  const reused = firstReusable(input, atUrl, gone);
  // Another record for the URL is an older one: it goes once the API says its endpoint is gone.
  for (const other of atUrl)
    if (reused && other !== reused.onFile && !gone.includes(other) && !input.endpoints.some((e) => e.id === other.id))
      gone.push(other);
  if (reused) return { action: 'reuse', ...reused, rewrite: rewriteFor(reused), remove: [], gone };

  const remove = input.endpoints.filter((e) => e.url === url && isListenEndpoint(e));
  const movable = ours.filter((r) => r.url !== url && input.movable?.(r) === true);
  const moved = firstReusable(input, movable, gone);
  if (moved) return { action: 'move', ...moved, rewrite: rewriteFor(moved), remove, gone };
  return { action: 'create', remove, gone };
}
