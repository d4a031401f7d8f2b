import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { isEveryInterface } from '../http/index.js';
import { OptionError } from '../errors.js';

/**
 * Normalizes `--forward-to` the way other tools do: `3000` → `http://localhost:3000`,
 * `localhost:3000/hooks` → `http://localhost:3000/hooks`, a full URL as is. `flag`: the option its messages name
 * (`replay --to` takes the same forms).
 */
export function normalizeForwardTarget(input: string, flag = '--forward-to'): URL {
  const value = input.trim();
  let candidate: string | undefined = value;
  if (/^\d+(\/.*)?$/.test(value)) candidate = `http://localhost:${value}`;
  else if (/^:\d+/.test(value)) candidate = `http://localhost${value}`;
  else if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    // Without a scheme it must be host[:port][/path]; anything else is most likely a mistyped URL
    // (`http:/localhost:3000` would otherwise forward to a host named "http", `htp//localhost:3000` to "htp").
    candidate = /^([a-z0-9._-]+|\[[0-9a-f:.]+\])(:\d+)?(\/(?!\/).*|\?.*)?$/i.test(value)
      ? `http://${value}`
      : undefined;
  }
  const url = candidate === undefined || !URL.canParse(candidate) ? undefined : new URL(candidate);
  // A port past 65535 makes no URL at all: said as the port it is, not as something that is not one.
  const outOfRange =
    url === undefined ? /^(?:[a-z][a-z0-9+.-]*:\/\/)?[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(candidate ?? value) : null;
  if (outOfRange && Number(outOfRange[1]) > 65_535)
    throw new OptionError(
      `${flag} ${JSON.stringify(input)}: its port must be 1-65535 (it is ${outOfRange[1]}); try 3000 or http://localhost:3000/hooks.`,
    );
  if (url === undefined) {
    throw new OptionError(
      `${flag} ${JSON.stringify(input)} is not a port, host:port or URL; try 3000, localhost:3000/hooks or http://localhost:3000/hooks.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OptionError(
      `${flag} ${JSON.stringify(input)} uses ${url.protocol}, but the app is reached over http or https; try 3000 or http://localhost:3000/hooks.`,
    );
  }
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (port < 1 || port > 65_535)
    throw new OptionError(
      `${flag} ${JSON.stringify(input)}: its port must be 1-65535 (it is ${url.port}); try 3000 or http://localhost:3000/hooks.`,
    );
  return url;
}

/**
 * Normalizes `--path` to `/…` without a trailing slash (except the root itself). It is a path only: a
 * query or a fragment in it (`--path '?x'`) made an endpoint URL no delivery's path could match, so every
 * delivery got 404.
 */
export function normalizeBasePath(path: string): string {
  const trimmed = `/${path.trim().replace(/^\/+|\/+$/g, '')}`;
  if (/[?#]/.test(trimmed))
    throw new OptionError(
      `--path ${JSON.stringify(path)} has a query or fragment; give a path only, such as /webhooks.`,
    );
  const encoded = new URL(trimmed, 'http://localhost').pathname;
  if (encoded !== trimmed)
    throw new OptionError(
      `--path ${JSON.stringify(path)} is not a URL path as written: a URL makes it ${encoded}. Give --path ${encoded}, or a path such as /webhooks.`,
    );
  return trimmed;
}

/**
 * The part of a request path under the listener's base path, or null when it is outside it:
 * base `/hooks`, `/hooks/a?b=1` → `/a?b=1`; base `/`, anything → itself.
 */
export function pathUnderBase(requestPath: string, basePath: string): string | null {
  if (basePath === '/') return requestPath;
  const [pathname] = requestPath.split('?', 1);
  if (pathname !== basePath && !pathname.startsWith(`${basePath}/`)) return null;
  return requestPath.slice(basePath.length) || '/';
}

/**
 * Appends the path under the base to the target's path, keeping the query, the target's first:
 * target `/hooks`: `/` → `/hooks`, `/a?b=1` → `/hooks/a?b=1`; target `/hooks?app=1`: `/a?b=1` →
 * `/hooks/a?app=1&b=1` (`--forward-to 3000/hooks?app=1` used to lose its `?app=1` on every delivery).
 */
export function joinTargetPath(target: URL, relative: string): string {
  const base = target.pathname.replace(/\/+$/, '');
  const queryIndex = relative.indexOf('?');
  const pathname = queryIndex === -1 ? relative : relative.slice(0, queryIndex);
  const query = queryIndex === -1 ? '' : relative.slice(queryIndex);
  const joined = pathname === '/' ? base || '/' : `${base}${pathname}`;
  if (!target.search) return `${joined}${query}`;
  return query.length > 1 ? `${joined}${target.search}&${query.slice(1)}` : `${joined}${target.search}`;
}

const isLoopback = (address: string) => /^(127\.|::1$|::ffff:127\.)/.test(address);

/**
 * Whether `target` is the listener itself: its port, at an address the listener answers on. `--forward-to
 * 4300` beside the default `--port 4300` sent every delivery back to the listener, which captured it and
 * forwarded it again, a capture per hop until the added X-Forwarded-For outgrew the header limit.
 */
export async function isListenerItself(target: URL, listening: { host: string; port: number }): Promise<boolean> {
  if (Number(target.port || (target.protocol === 'https:' ? 443 : 80)) !== listening.port) return false;
  const addressesOf = async (host: string) =>
    (await lookup(host.replace(/^\[|\]$/g, ''), { all: true }).catch(() => [])).map(({ address }) => address);
  const targets = await addressesOf(target.hostname);
  // A listener on every interface answers on each of this machine's addresses; one on a host, on that host's.
  const answering = isEveryInterface(listening.host)
    ? Object.values(networkInterfaces()).flatMap((infos) => (infos ?? []).map((info) => info.address))
    : await addressesOf(listening.host);
  // Any loopback address is this machine: 127.0.0.1 and ::1 are told apart only by how the app listens.
  return targets.some((address) => answering.includes(address) || (isLoopback(address) && answering.some(isLoopback)));
}
