/** Every subscribable event type of the contract's Events table, grouped by resource. */
export const EVENT_TYPES_BY_RESOURCE = {
  employee: ['employee.created', 'employee.updated', 'employee.deleted'],
  punch: ['punch.created', 'punch.updated', 'punch.deleted'],
  time_entry: ['time_entry.created', 'time_entry.updated', 'time_entry.deleted'],
  shift: ['shift.created', 'shift.updated', 'shift.deleted', 'shift.published'],
  location: ['location.created', 'location.updated', 'location.deleted'],
  job_code: ['job_code.created', 'job_code.updated', 'job_code.deleted'],
  position: ['position.created', 'position.updated', 'position.deleted'],
  group: ['group.created', 'group.updated', 'group.deleted'],
  geofence: ['geofence.created', 'geofence.updated', 'geofence.deleted'],
  pto_request: [
    'pto_request.created',
    'pto_request.updated',
    'pto_request.approved',
    'pto_request.denied',
    'pto_request.cancelled',
  ],
  pay_period: ['pay_period.approved', 'pay_period.reopened'],
  time_card: ['time_card.approved', 'time_card.rejected'],
  schedule: ['schedule.published'],
} as const;

export type ResourceName = keyof typeof EVENT_TYPES_BY_RESOURCE;
export type DomainEventType = (typeof EVENT_TYPES_BY_RESOURCE)[ResourceName][number];

/** The synthetic type produced only by the ping operation; never subscribable. */
export const PING_EVENT_TYPE = 'webhook_endpoint.ping';
export const WILDCARD = '*';

export type EventType = DomainEventType | typeof PING_EVENT_TYPE;

/** All subscribable domain event types, in catalogue order. */
export const EVENT_TYPES: readonly DomainEventType[] = Object.freeze(
  Object.values(EVENT_TYPES_BY_RESOURCE).flat() as DomainEventType[],
);

const DOMAIN_TYPES = new Set<string>(EVENT_TYPES);

export function isDomainEventType(type: string): type is DomainEventType {
  return DOMAIN_TYPES.has(type);
}

/** A domain type or the synthetic ping type: anything a delivery envelope may carry. */
export function isKnownEventType(type: string): type is EventType {
  return DOMAIN_TYPES.has(type) || type === PING_EVENT_TYPE;
}

/** The resource an event type belongs to (`punch.created` → `punch`). */
export function resourceOf(type: DomainEventType): ResourceName {
  return type.slice(0, type.indexOf('.')) as ResourceName;
}

/**
 * Whether an endpoint subscribed to `subscription` receives an event of `type`. `*` matches every
 * domain type; the ping type never matches through a filter (it bypasses filters instead).
 */
export function matchesSubscription(type: string, subscription: readonly string[]): boolean {
  if (!isDomainEventType(type)) return false;
  return subscription.includes(WILDCARD) || subscription.includes(type);
}

/** Edits (insert, delete or replace one character, or swap two side by side) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  // Optimal string alignment: a swap of two letters side by side (`paht`, `path`) is one edit, as it is one slip.
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      let best = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2] + 1);
      current.push(best);
    }
    [before, previous] = [previous, current];
  }
  return previous[b.length];
}

/**
 * The event type a mistyped one most likely meant (`employe.created`, `punch_created`, `Shift.Published`,
 * `pto_request.approve`), as git and npm suggest a command: the nearest within a few edits, or none.
 */
export function suggestEventType(typed: string): DomainEventType | null {
  const wanted = typed.trim().toLowerCase();
  let best: DomainEventType | null = null;
  let bestDistance = Math.max(2, Math.floor(wanted.length / 5)) + 1;
  for (const type of EVENT_TYPES) {
    const distance = editDistance(wanted, type);
    if (distance < bestDistance) [best, bestDistance] = [type, distance];
  }
  return best;
}

/** Where a CLI user finds the 38 types listed; MCP names its own tool (see unknownTypeWords). */
export const CLI_TYPE_LISTING = 'npx clockhook trigger --help';

/** The types of the resource a typed one names before its dot (`punch.nope` → the punch types), if any. */
function familyOf(typed: string): readonly DomainEventType[] | null {
  const resource = typed.trim().toLowerCase().split('.')[0];
  const types = EVENT_TYPES_BY_RESOURCE[resource as ResourceName] as readonly DomainEventType[] | undefined;
  return types ?? null;
}

/**
 * Why a typed event type is none of the service's, in the words every surface gives (the CLI's commands and
 * flags, routes, the MCP tools): the type it most likely meant (`employe.created`: employee.created); else
 * the types of the resource it names (`punch.nope`: punch.created, punch.updated, punch.deleted); else where
 * the types are listed, `listing` (a command, or a tool).
 */
export function unknownTypeWords(typed: string, listing: string = CLI_TYPE_LISTING): string {
  const shown = `unknown event type ${JSON.stringify(typed)}`;
  const suggestion = suggestEventType(typed);
  if (suggestion) return `${shown} (did you mean ${suggestion}?)`;
  const family = familyOf(typed);
  const resource = typed.trim().toLowerCase().split('.')[0];
  if (family) return `${shown} (the ${resource} types are ${family.join(', ')})`;
  return `${shown} (none of the ${EVENT_TYPES.length} types is close: ${listing} lists them)`;
}

export type SubscriptionCheck = { ok: true; types: string[] } | { ok: false; invalid: string[]; message: string };

/**
 * Validates a subscription list: non-empty, each entry a catalogue type or `*`. The message of a
 * failure lists the valid types, so a person can correct the request.
 */
export function validateSubscription(types: unknown): SubscriptionCheck {
  if (!Array.isArray(types) || types.length === 0 || types.some((t) => typeof t !== 'string')) {
    return {
      ok: false,
      invalid: [],
      message: 'must be a non-empty array of event-type strings, or ["*"] for every type',
    };
  }
  const invalid = types.filter((t) => t !== WILDCARD && !isDomainEventType(t));
  if (invalid.length > 0) {
    const pingNote = invalid.includes(PING_EVENT_TYPE)
      ? ` ${PING_EVENT_TYPE} is not subscribable: pings reach the endpoint whatever it subscribes to.`
      : '';
    return {
      ok: false,
      invalid,
      message: `${invalid.map((t) => (t === PING_EVENT_TYPE ? `${t} is not a type to subscribe to` : unknownTypeWords(t))).join('; ')}.${pingNote} Valid types: *, ${EVENT_TYPES.join(', ')}`,
    };
  }
  return { ok: true, types: [...new Set(types as string[])] };
}
