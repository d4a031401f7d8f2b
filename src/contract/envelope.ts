import { isKnownEventType } from './event-types.js';

/** The JSON body the service POSTs to a receiver (contract: Delivery envelope). snake_case by design. */
export interface DeliveryEnvelope<Data = Record<string, unknown>> {
  /** Event id, `evt_…`; the same across redeliveries. Receivers deduplicate on it. */
  id: string;
  object: 'event';
  type: string;
  /** YYYY-MM-DD label of the payload version; read per event, never assumed constant. */
  api_version: string;
  /** Unix seconds. */
  created: number;
  data: Data;
}

export interface ContractProblem {
  field: string;
  message: string;
}

const API_VERSION = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** Labels found good: every delivery carries one, and there are few (a cap keeps junk from growing it). */
const GOOD_LABELS = new Set<string>();

/** Whether `value` is an api_version label: a date YYYY-MM-DD that is on the calendar (not 2026-02-30). */
export function isApiVersionLabel(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (GOOD_LABELS.has(value)) return true;
  const good = API_VERSION.test(value) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
  if (good && GOOD_LABELS.size < 64) GOOD_LABELS.add(value);
  return good;
}

/** Seconds, not milliseconds: a value this large is almost certainly a JS `Date.now()`. */
const MAX_PLAUSIBLE_SECONDS = 100_000_000_000;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Lists how a parsed delivery body breaks the contract's envelope. An empty list means it conforms.
 * Used to flag deliveries (and `clockhook check`) — never throws.
 */
export function checkEnvelope(json: unknown): ContractProblem[] {
  if (!isPlainObject(json)) return [{ field: '(body)', message: 'the body is not a JSON object' }];
  const problems: ContractProblem[] = [];
  const { id, object, type, api_version: apiVersion, created, data } = json;
  if (typeof id !== 'string' || !id.startsWith('evt_') || id.length <= 4) {
    problems.push({ field: 'id', message: 'must be a string starting with evt_' });
  }
  if (object !== 'event') problems.push({ field: 'object', message: 'must be the constant "event"' });
  if (type === undefined)
    problems.push({ field: 'type', message: 'missing: must name an event type, such as "punch.created"' });
  else if (typeof type !== 'string') problems.push({ field: 'type', message: 'must be a string naming an event type' });
  else if (!isKnownEventType(type))
    problems.push({ field: 'type', message: `unknown event type ${JSON.stringify(type)}` });
  if (!isApiVersionLabel(apiVersion)) {
    problems.push({ field: 'api_version', message: 'must be a date label YYYY-MM-DD' });
  }
  if (typeof created !== 'number' || !Number.isInteger(created) || created < 0) {
    problems.push({ field: 'created', message: 'must be an integer Unix timestamp in seconds' });
  } else if (created > MAX_PLAUSIBLE_SECONDS) {
    problems.push({ field: 'created', message: 'looks like milliseconds; the contract uses seconds' });
  }
  if (!isPlainObject(data)) problems.push({ field: 'data', message: 'must be an object (the resource)' });
  return problems;
}
