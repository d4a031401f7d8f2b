import {
  type ForwardRoute,
  isListenerItself,
  isRouted,
  normalizeForwardTarget,
  parseRoute,
  type RouteOption,
  routeSpecOf,
  type RouteSpec,
} from '../listener/index.js';
import { parseFilters } from '../listener/filters.js';
import { shownUrl } from '../http/index.js';
import { ListenUsageError } from './usage-error.js';

/** Where deliveries go: routes to one app or by event type (ForwardRoute, the listener's one shape), or none. */
export interface Targets {
  /** No route: capture-only. One route of every type: the app. Else routes by event type. */
  routes: ForwardRoute[];
  /** Whether they go by event type (`--forward-to TYPES=TARGET`, or several). */
  routed: boolean;
  /** Every target with the name it is said by: `--forward-to 3000`, or the route. */
  all: { label: string; url: URL }[];
}

/** The targets of `--forward-to` (a target or `[TYPES=]TARGET` routes, none for capture-only); a bad one is a usage error. */
export function targetsOf(forwardTo: string | readonly RouteOption[] | null | undefined): Targets {
  const given =
    forwardTo === null || forwardTo === undefined ? [] : typeof forwardTo === 'string' ? [forwardTo] : forwardTo;
  let parsed: (RouteSpec & { filters?: readonly string[] })[];
  try {
    parsed = given.map((route) => {
      const filters = typeof route === 'string' ? undefined : route.filter;
      if (filters) parseFilters(filters); // a rule it cannot read is refused now
      return { ...parseRoute(routeSpecOf(route)), ...(filters ? { filters } : {}) };
    });
  } catch (error) {
    throw new ListenUsageError((error as Error).message);
  }
  const routes = parsed.map(({ types, target, filters }) => ({
    types,
    target: normalizeForwardTarget(target),
    ...(filters ? { filters } : {}),
  }));
  const all = routes.map(({ types, target }) => ({
    label: types ? `route ${types.join(',')}=${shownUrl(target)}` : `--forward-to ${shownUrl(target)}`,
    url: target,
  }));
  return { routes, routed: isRouted(routes), all };
}

/** The one app deliveries go to, as shown (the ready line, the page); null with routes by type or none. */
export const appOf = (targets: Targets): string | null =>
  !targets.routed && targets.routes[0] ? shownUrl(targets.routes[0].target) : null;

/** The routes as the ready line and the page list them; undefined without routes by event type. */
export function routeNames(targets: Targets): string[] | undefined {
  if (!targets.routed) return undefined;
  return targets.routes.map(({ types, target }) =>
    types ? `${types.join(',')}=${shownUrl(target)}` : shownUrl(target),
  );
}

/**
 * A target that is this listen's own listener or inspector would send every delivery around in a loop, or
 * to a page that answers 404: refused, naming the target and what to give instead.
 */
export async function refuseOwnAddress(
  targets: Targets,
  own: { host: string; port: number },
  what: 'listener' | 'inspector',
): Promise<void> {
  for (const { label, url } of targets.all) {
    if (!(await isListenerItself(url, own))) continue;
    throw new ListenUsageError(
      what === 'listener'
        ? `${label} is this listener itself (port ${own.port}): every delivery would come back to it. Give your app's port, such as --forward-to 3000, or move the listener with --port.`
        : `${label} is this listen's inspector page (port ${own.port}), not your app: it would answer every delivery 404. Give your app's port, such as --forward-to 3000, or move the inspector with --inspector-port.`,
    );
  }
}
