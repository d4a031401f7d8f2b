// listen's flags as ListenOptions: each parsed and checked here, its default from LISTEN_DEFAULTS (shown by
// --help), and what listen is told to say wired to the terminal or to --json.
import type { DeliveryReport } from '../listener/index.js';
import type { RouteOption } from '../listener/routes.js';
import { MAX_BODY_BYTES } from '../listener/options.js';
import type { ListenOptions, RelayEvent } from '../listen/index.js';
import { consoleLogger } from '../logger.js';
import { formatSizeFlag } from '../size.js';
import { UsageError } from '../errors.js';
import { parseEventList } from './api-options.js';
import { type AppWaitFlags, sayAppState, waitForAppMs } from './app-wait.js';
import { deliveryJson, deliveryLine } from './delivery-line.js';
import { type FaultFlags, faultsOption } from './listen-faults.js';
import { parseFilters } from '../listener/filters.js';
import { printLine, writeLine } from './output.js';
import { fromEnv, parseFetchablePort, parsePort, parsePositiveInt, parseSizeFlag, parseTimeScale } from './process.js';
import { sayTracing, type TracingFlags, traceUrlOption, tracingOption } from './tracing.js';

export interface ListenFlags extends FaultFlags, AppWaitFlags, TracingFlags {
  config?: string;
  catchUp?: boolean;
  yes?: boolean;
  /** `--forward-to` routes, and a config file's (which may carry filters of their own). */
  forwardTo: RouteOption[];
  filter: string[];
  /** The app's start command from the config file (`-- <command>` on the command line wins). */
  command?: string;
  secretEnv: string;
  exec?: string;
  port: string;
  inspectorPort: string;
  sandboxPort: string;
  timeScale?: string;
  host: string;
  path: string;
  secret?: string;
  skipVerify?: boolean;
  tolerance: string;
  timeout: string;
  db?: string;
  maxCaptures: string;
  maxBuffer: string;
  apiKey?: string;
  apiBase?: string;
  publicUrl?: string;
  relay?: string;
  relayGiveUp?: string;
  relayKey?: string;
  events: string;
  endpoint?: string;
  keepEndpoint?: boolean;
  printSecret?: boolean;
  json?: boolean;
  inspector: boolean;
  open: boolean;
}

function toNumber(value: string, flag: string, min = 0): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min)
    throw new UsageError(`${flag} must be a number of at least ${min} (got ${value}).`);
  return n;
}

/** --max-buffer: room for at least one delivery of the largest size. */
function maxBuffer(value: string): number {
  const bytes = parseSizeFlag(value, '--max-buffer');
  if (bytes < MAX_BODY_BYTES)
    throw new UsageError(
      `--max-buffer must be at least ${formatSizeFlag(MAX_BODY_BYTES)}, the largest body a delivery may have (got ${value}).`,
    );
  return bytes;
}

/**
 * The flags as ListenOptions; `say` prints a line once listen is ready (the ready line comes first); `letGo`
 * is told when the relay let this listener go (it must stop).
 */
export function listenOptionsOf(
  flags: ListenFlags,
  say: (print: () => void) => void,
  letGo: (event: RelayEvent) => void,
): ListenOptions {
  return {
    forwardTo: flags.forwardTo,
    port: parsePort(flags.port, '--port'),
    sandboxPort: parseFetchablePort(
      flags.sandboxPort,
      '--sandbox-port',
      'fetch, which clockhook calls the sandbox with,',
    ),
    ...(flags.timeScale === undefined ? {} : { timeScale: parseTimeScale(flags.timeScale) }),
    host: flags.host,
    path: flags.path,
    secret: flags.secret ?? fromEnv('CLOCKHOOK_SECRET'),
    skipVerify: Boolean(flags.skipVerify),
    tolerance: toNumber(flags.tolerance, '--tolerance'),
    timeoutMs: toNumber(flags.timeout, '--timeout', 1),
    waitForAppMs: waitForAppMs(flags.waitForApp),
    faults: faultsOption(flags),
    filters: parseFilters(flags.filter).map((f) => f.rule),
    tracing: tracingOption(flags.otlp, 'clockhook-listen'),
    traceUrl: traceUrlOption(flags.traceUrl),
    onTracing: (event) => say(() => sayTracing(event, Boolean(flags.json))),
    onAppState: (event) => say(() => sayAppState(event, Boolean(flags.json))),
    dbPath: flags.db ?? fromEnv('CLOCKHOOK_DB'),
    maxCaptures: parsePositiveInt(flags.maxCaptures, '--max-captures'),
    maxBufferedBytes: maxBuffer(flags.maxBuffer),
    apiKey: flags.apiKey ?? fromEnv('CLOCKHOOK_API_KEY'),
    apiBase: flags.apiBase ?? fromEnv('CLOCKHOOK_API_BASE'),
    publicUrl: flags.publicUrl,
    relay: flags.relay,
    relayKey: flags.relayKey ?? fromEnv('CLOCKHOOK_RELAY_KEY'),
    relayMaxDisconnectedMs:
      flags.relayGiveUp === undefined ? undefined : toNumber(flags.relayGiveUp, '--relay-give-up', 1) * 1000,
    onRelayEvent: (event: RelayEvent) => {
      if (flags.json) say(() => printLine({ event: 'relay', ...event }));
      if (event.state === 'replaced' || event.state === 'refused' || event.state === 'gave-up') letGo(event);
    },
    events: parseEventList(flags.events),
    endpointId: flags.endpoint === undefined ? undefined : parsePositiveInt(flags.endpoint, '--endpoint'),
    keepEndpoint: Boolean(flags.keepEndpoint),
    inspector: flags.inspector,
    inspectorPort: parseFetchablePort(flags.inspectorPort, '--inspector-port', 'a browser'),
    logger: consoleLogger,
    onDelivery: (report: DeliveryReport) =>
      say(() => (flags.json ? printLine(deliveryJson(report)) : writeLine(deliveryLine(report)))),
  };
}
