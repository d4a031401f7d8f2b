import { isListenerItself, normalizeForwardTarget, parseRoute, type RouteSpec } from '../listener/index.js';
import { shownUrl } from '../net.js';
import { type ListenOptions, ListenUsageError } from './options.js';

/** Where deliveries go: one app (`forwardTo`), routes by event type, or nowhere (capture-only). */
export interface Targets {
  forwardTo: URL | null;
  /** Set with routes by event type: `--forward-to TYPES=TARGET`, or several. */
  routes?: { types: string[] | null; target: URL }[];
  /** Every target with the name it is said by: `--forward-to 3000`, or the route. */
  all: { label: string; url: URL }[];
}

/** The targets of `forwardTo`, or of `routes` (`[TYPES=]TARGET` each); a bad one is a usage error. */
export function targetsOf(options: Pick<ListenOptions, 'forwardTo' | 'routes'>): Targets {
  const specs = options.routes ?? (options.forwardTo ? [options.forwardTo] : []);
  let parsed: RouteSpec[];
  try {
    parsed = specs.map(parseRoute);
  } catch (error) {
    throw new ListenUsageError((error as Error).message);
  }
  const routes = parsed.map(({ types, target }) => ({ types, target: normalizeForwardTarget(target) }));
  const all = routes.map(({ types, target }) => ({
    label: types ? `route ${types.join(',')}=${shownUrl(target)}` : `--forward-to ${shownUrl(target)}`,
    url: target,
  }));
  const routed = routes.length > 1 || routes.some((r) => r.types !== null);
  return { forwardTo: routes[0]?.target ?? null, ...(routed ? { routes } : {}), all };
}

/** The routes as the ready line and the page list them. */
export function routeNames(targets: Targets): string[] | undefined {
  return targets.routes?.map(({ types, target }) =>
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
