import { randomBytes } from 'node:crypto';
import type { Adapter, Low } from 'lowdb';
import type { DeliveryAttempt } from '../contract/index.js';
import type { Logger } from '../logger.js';
import { readJsonFile, writePrivateFile } from '../folder/index.js';

/** DESIGN.md: the sandbox's scopes. */
export const SCOPES = ['webhooks:read', 'webhooks:write', 'events:read', 'events:write'] as const;
export type Scope = (typeof SCOPES)[number];

export const PLANS = { trial: 60, pro: 600, enterprise: 1000 } as const;
export type Plan = keyof typeof PLANS;

export const LIVE_KEY_PREFIX = 'tt_live_';
export const SECRET_PREFIX = 'whsec_';
export const DEFAULT_ACCOUNT = 'acct_default';

export interface AccountRecord {
  id: string;
  plan: Plan;
  createdAt: string;
}

export interface KeyRecord {
  key: string;
  account: string;
  scopes: Scope[];
  createdAt: string;
}

export interface EndpointRecord {
  id: number;
  account: string;
  url: string;
  enabledEvents: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  secret: string;
  consecutiveFailures: number;
  createdAt: string;
  updatedAt: string;
}

export interface EventRecordStored {
  id: string;
  /** Monotonic order, for newest-first lists and cursors. */
  seq: number;
  account: string;
  type: string;
  apiVersion: string;
  created: number;
  data: Record<string, unknown>;
  /** webhook_endpoint.ping events: never redeliverable. */
  synthetic: boolean;
  delivery_attempts: DeliveryAttempt[];
}

/** One event on its way to one endpoint; pending ones resume after a restart. */
export interface DeliveryRecord {
  id: string;
  eventId: string;
  endpointId: number;
  attemptsMade: number;
  state: 'pending' | 'delivered' | 'failed' | 'cancelled';
  /** Epoch ms of the next attempt, while pending. */
  nextAttemptAt: number | null;
}

/** Write history for the trial caps' rolling 24-hour windows. */
export interface UsageRecord {
  account: string;
  kind: 'write' | 'endpoint_create';
  at: number;
}

export interface IdempotencyRecord {
  scope: string;
  fingerprint: string;
  status: number;
  body: unknown;
  at: number;
}

export interface SandboxData {
  version: 1;
  nextEndpointId: number;
  nextEventSeq: number;
  accounts: AccountRecord[];
  keys: KeyRecord[];
  endpoints: EndpointRecord[];
  events: EventRecordStored[];
  deliveries: DeliveryRecord[];
  usage: UsageRecord[];
  idempotency: IdempotencyRecord[];
}

/**
 * Retention: the sandbox keeps the newest `max` events (over all accounts) with their delivery
 * records; an event with a delivery still pending is kept whatever its age. Its state file is
 * rewritten whole on every change, so without a bound a long-lived sandbox folder would make each
 * write slower (docs/performance-notes.md).
 */
export function dropOldestEvents(data: SandboxData, max: number): void {
  let excess = data.events.length - max;
  if (excess <= 0) return;
  const pending = new Set(data.deliveries.filter((d) => d.state === 'pending').map((d) => d.eventId));
  const dropped = new Set<string>();
  // Events are stored oldest first.
  for (const event of data.events) {
    if (excess === 0) break;
    if (pending.has(event.id)) continue;
    dropped.add(event.id);
    excess--;
  }
  if (dropped.size === 0) return;
  data.events = data.events.filter((e) => !dropped.has(e.id));
  data.deliveries = data.deliveries.filter((d) => !dropped.has(d.eventId));
}

function emptyData(): SandboxData {
  return {
    version: 1,
    nextEndpointId: 1,
    nextEventSeq: 1,
    accounts: [],
    keys: [],
    endpoints: [],
    events: [],
    deliveries: [],
    usage: [],
    idempotency: [],
  };
}

function isSandboxData(value: unknown): value is SandboxData {
  const data = value as SandboxData;
  return (
    typeof value === 'object' &&
    value !== null &&
    data.version === 1 &&
    Array.isArray(data.endpoints) &&
    Array.isArray(data.keys)
  );
}

/** lowdb adapter: atomic 0600 writes; a corrupt file is moved aside with a warning, never overwritten. */
class PrivateJsonAdapter implements Adapter<SandboxData> {
  constructor(
    private readonly path: string,
    private readonly logger: Logger,
  ) {}

  async read(): Promise<SandboxData | null> {
    const result = await readJsonFile(this.path, isSandboxData, {
      marker: '{"version":1,',
      what: 'a clockhook sandbox state',
    });
    if (result.status === 'corrupt') {
      this.logger.warn(
        `Sandbox state ${this.path} could not be read (${result.reason}); moved it to ${result.movedTo} and started empty.`,
      );
    }
    return result.status === 'ok' ? result.data : null;
  }

  write(data: SandboxData): Promise<void> {
    return writePrivateFile(this.path, JSON.stringify(data));
  }
}

/** Where the sandbox keeps its state: lowdb over a 0600 file, or memory only (a test's sandbox). */
export type SandboxDb = Pick<Low<SandboxData>, 'data' | 'write'>;

/**
 * The sandbox's state from its file (lowdb, loaded only then), or, with no path, in memory: a test's
 * sandbox (`clockhook/testing`) keeps nothing, so it needs no file and loads no lowdb, which is what lets
 * it be required from CommonJS under any test runner.
 */
export async function openSandboxState(path: string | null, logger: Logger): Promise<SandboxDb> {
  if (path === null) return { data: emptyData(), write: async () => {} };
  const { Low } = await import('lowdb');
  const db = new Low<SandboxData>(new PrivateJsonAdapter(path, logger), emptyData());
  await db.read();
  return db;
}

export const newApiKey = () => `${LIVE_KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
export const newSecret = () => `${SECRET_PREFIX}${randomBytes(24).toString('base64url')}`;
export const newEventId = () => `evt_${randomBytes(12).toString('hex')}`;
export const newAccountId = () => `acct_${randomBytes(8).toString('hex')}`;
export const newRequestId = () => `req_${randomBytes(10).toString('hex')}`;
