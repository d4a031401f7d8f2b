// The inspector's options: each documented once with its default, the defaults in one object, and one function
// that makes the whole configuration from what was given (as the listener's listenerConfig does).
import { fileURLToPath } from 'node:url';
import { type Logger, silentLogger } from '../logger.js';
import type { ActionContext } from './protocol.js';

export interface InspectorOptions extends ActionContext {
  /** @default 4301; always bound to 127.0.0.1 */
  port?: number;
  /** Where the token is kept so an open page reconnects after a restart. */
  tokenPath: string;
  /** @default the package's ui/ folder */
  uiDir?: string;
  /** How often to ping pages (and terminate dead ones). @default 15000 */
  heartbeatMs?: number;
  /** How often to re-read the endpoint, to show status changes. @default 15000 */
  endpointPollMs?: number;
  /** A page whose unsent data exceeds this gets a resync snapshot instead of more captures. @default 4 MiB */
  maxBufferedBytes?: number;
  logger?: Logger;
}

const INSPECTOR_DEFAULTS = {
  port: 4301,
  uiDir: fileURLToPath(new URL('../../ui', import.meta.url)),
  heartbeatMs: 15_000,
  endpointPollMs: 15_000,
  maxBufferedBytes: 4 * 1024 * 1024,
  logger: silentLogger as Logger,
};

/** An inspector's whole configuration: the options given, over their defaults. */
export type InspectorConfig = Omit<InspectorOptions, keyof typeof INSPECTOR_DEFAULTS> & typeof INSPECTOR_DEFAULTS;

/** The options over their defaults (an undefined field takes the default). */
export function inspectorConfig(options: InspectorOptions): InspectorConfig {
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return Object.assign({}, INSPECTOR_DEFAULTS, given) as InspectorConfig;
}
