// The relay server's options: each documented once with its default, the defaults in one object, and one
// function that makes the whole configuration from what was given (as the listener's listenerConfig does).
import { LIMITS, MAX_DELIVERY_BYTES } from '../contract/index.js';
import { type Logger, silentLogger } from '../logger.js';
import type { RelayRequestLog } from './handle.js';
import type { DeliveryTracer } from '../listener/tracing.js';

export interface RelayServerOptions {
  /** @default 8080 */
  port?: number;
  /** @default '0.0.0.0' */
  host?: string;
  /** The URL senders use (behind a TLS proxy, say). @default the bound address */
  publicUrl?: string;
  /** PEM files to serve HTTPS directly. */
  tlsCert?: string;
  tlsKey?: string;
  /** Largest request body relayed. @default MAX_DELIVERY_BYTES (5 MiB, as listen takes) */
  maxBody?: number;
  /**
   * Most bytes of request bodies held at once, being read or in flight, in all; one channel may hold a
   * quarter of it. Beyond: 503 with Retry-After. @default 256 MiB
   */
  maxBuffered?: number;
  /** @default 1000 */
  maxChannels?: number;
  /** Requests in flight per channel. @default 256 */
  maxInFlight?: number;
  /** How long a sender waits for the listener. @default LIMITS.receiverTimeoutMs (the contract's) */
  responseTimeoutMs?: number;
  /** Ping interval; a listener silent for two intervals is dropped. @default 15000 */
  heartbeatMs?: number;
  /** Headers and body must arrive within this (slowloris). @default 60000 */
  requestTimeoutMs?: number;
  /** Retry-After seconds on 503. @default 10 */
  retryAfterSeconds?: number;
  /** A Redis URL: instances that share it share their channels (see docs/relay.md). */
  redis?: string;
  /** Without Redis, a file of access keys (`clockhook relay keys`): listeners must present one. */
  keysFile?: string;
  /** Channels one access key may hold at once, on all instances. @default 20 */
  maxChannelsPerKey?: number;
  /** Requests in flight on one access key's channels, per instance. @default 256 */
  maxInFlightPerKey?: number;
  /** How often the access keys are read again and each key's use written. @default 2000 */
  keysRefreshMs?: number;
  logger?: Logger;
  /** Told about each relayed request (never bodies, tokens or secrets). */
  onRequest?: (log: RelayRequestLog) => void;
  /** Spans of each relayed request (`relay --otlp`): see docs/tracing.md. @default off */
  tracer?: DeliveryTracer | null;
}

const RELAY_DEFAULTS = {
  port: 8080,
  host: '0.0.0.0',
  maxBody: MAX_DELIVERY_BYTES,
  maxBuffered: 256 * 1024 * 1024,
  maxChannels: 1000,
  maxInFlight: 256,
  responseTimeoutMs: LIMITS.receiverTimeoutMs as number,
  heartbeatMs: 15_000,
  requestTimeoutMs: 60_000,
  retryAfterSeconds: 10,
  maxChannelsPerKey: 20,
  maxInFlightPerKey: 256,
  keysRefreshMs: 2000,
  logger: silentLogger as Logger,
  onRequest: (_log: RelayRequestLog) => {},
  tracer: null as DeliveryTracer | null,
};

/** A relay's whole configuration: the options given, over their defaults. */
export type RelayConfig = typeof RELAY_DEFAULTS &
  Pick<RelayServerOptions, 'publicUrl' | 'tlsCert' | 'tlsKey' | 'redis' | 'keysFile'>;

/** The options over their defaults (an undefined field takes the default). */
export function relayConfig(options: RelayServerOptions = {}): RelayConfig {
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return Object.assign({}, RELAY_DEFAULTS, given) as RelayConfig;
}
