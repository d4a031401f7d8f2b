import { EVENT_TYPES, isDomainEventType, PING_EVENT_TYPE, unknownTypeWords } from '../contract/index.js';
import type { Capture } from '../store/index.js';
import type { Forwarder } from './forward.js';
import { OptionError } from '../errors.js';
import type { DeliveryFilter } from './filters.js';

/** `--forward-to [TYPES=]TARGET`: the event-type patterns a route takes (null: every type), and its target. */
export interface RouteSpec {
  types: string[] | null;
  target: string;
}

/** A route with its target made a URL (see normalizeForwardTarget): the one shape forwarding travels in. */
export interface ForwardRoute {
  types: string[] | null;
  target: URL;
  /** The `--filter` rules of this route alone (a config file's route `{ "to", "filter" }`), beside listen's. */
  filters?: readonly string[];
}

/** A route as a config file may give it: `[TYPES=]TARGET`, or that with filters of its own. */
export type RouteOption = string | { to: string; filter?: readonly string[] };

/** The route's `[TYPES=]TARGET`, however it was given. */
export const routeSpecOf = (route: RouteOption): string => (typeof route === 'string' ? route : route.to);

/** A route as the listener uses it: its name (as the capture records it) and its forwarder. */
export interface Route {
  name: string;
  types: string[] | null;
  forwarder: Forwarder;
  /** Its own filters, beside listen's (see ForwardRoute). */
  filters: readonly DeliveryFilter[];
}

/** `punch.*`, `time_card.approved` or `*`: a type of the catalogue, a resource's types, or all. */
export function patternProblem(pattern: string): string | null {
  if (pattern === '*' || isDomainEventType(pattern)) return null;
  if (pattern.endsWith('.*') && EVENT_TYPES.some((type) => type.startsWith(pattern.slice(0, -1)))) return null;
  return unknownTypeWords(pattern);
}

/**
 * Splits `punch.*,time_entry.*=3000/attendance` into its types and target. Without `TYPES=` (a target such
 * as `3000`, or a URL whose query holds `=`) the route takes every type. Throws a TypeError naming the route.
 */
export function parseRoute(spec: string): RouteSpec {
  const example = "A route is [TYPES=]TARGET, e.g. 'punch.*,time_entry.*=3000/attendance', or 3000 for every type.";
  if (spec.trim().startsWith('='))
    throw new OptionError(`--forward-to ${spec}: no event types before the =. ${example}`);
  if (/^[a-z_*.]+(?:,[a-z_*.]+)*=$/.test(spec.trim()))
    throw new OptionError(`--forward-to ${spec}: no target after the =. ${example}`);
  const match = /^([a-z_*.]+(?:,[a-z_*.]+)*)=(.+)$/.exec(spec.trim());
  if (!match) return { types: null, target: spec.trim() };
  const types = match[1].split(',');
  const problem = types.map(patternProblem).find(Boolean);
  if (problem) throw new OptionError(`--forward-to ${spec}: ${problem}. ${example}`);
  return { types: types.includes('*') ? null : types, target: match[2] };
}

/** Whether a route's patterns take `type`. */
export function routeTakes(types: string[] | null, type: string): boolean {
  return (
    types === null ||
    types.some((pattern) => pattern === type || (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))))
  );
}

/**
 * The route a delivery of `type` goes to: the first whose patterns take it. A ping (or a body with no
 * type) goes to the first route that takes every type, else the first route.
 */
export function chooseRoute<R extends { types: string[] | null }>(routes: readonly R[], type: string | null): R | null {
  if (type === null || type === PING_EVENT_TYPE) return routes.find((r) => r.types === null) ?? routes[0] ?? null;
  return routes.find((r) => routeTakes(r.types, type)) ?? null;
}

/** Whether routes go by event type (`TYPES=TARGET`, or several): captures then record their route. */
export const isRouted = (routes: readonly { types: string[] | null }[]) =>
  routes.length > 1 || routes.some((r) => r.types !== null);

/** The route a capture goes by: the one it recorded, or the only one there is. */
export function routeOfCapture(routes: Route[], routed: boolean, capture: Capture): Route | null {
  if (!routed) return routes[0] ?? null;
  return routes.find((r) => r.name === capture.route) ?? null;
}
