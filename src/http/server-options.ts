import type { ServerOptions } from 'node:http';

/**
 * The time limits of a server that anyone may reach (the listener, the relay): headers and body must
 * arrive within `requestTimeoutMs`, so a slowloris connection is dropped. Node 20 reads these only from
 * the createServer options; setting them later has no effect.
 */
export function hardenedServerOptions(requestTimeoutMs: number): ServerOptions {
  return {
    headersTimeout: requestTimeoutMs,
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: 5_000,
    // How often Node looks for requests past those limits (30 s by default): a slow connection is
    // dropped soon after its limit, not up to 30 s later.
    // At most every 30 s (Node's own default), sooner for a short request timeout.
    connectionsCheckingInterval: Math.min(30 * 1000, Math.max(100, Math.floor(requestTimeoutMs / 4))),
  };
}
