import { networkInterfaces } from 'node:os';
import { type Command, Option } from 'commander';
import { type ListenOptions, type ReadyInfo, type RelayEvent, startListen } from '../listen/index.js';
import { type DeliveryReport, MAX_BODY_BYTES } from '../listener/index.js';
import { consoleLogger } from '../logger.js';
import { CliError } from '../errors.js';
import { isEveryInterface } from '../net.js';
import { parseEventList } from './api-options.js';
import { reportMissed } from './catch-up.js';
import { applyConfigFile } from './config.js';
import { UsageError } from '../errors.js';
import { colour, maskSecret, printLine, writeLine } from './output.js';
import {
  bindFailure,
  fileFailure,
  fromEnv,
  onShutdown,
  parseFetchablePort,
  parsePort,
  parsePositiveInt,
  parseSizeFlag,
  parseTimeScale,
  strayArgumentsError,
} from './process.js';
import { deliveryJson, deliveryLine } from './delivery-line.js';
import {
  type FaultFlags,
  withListenExtras,
  faultsOption,
  faultsReadyLine,
  sayAppState,
  waitForAppMs,
} from './listen-faults.js';
import { sayTracing, traceUrlOption, tracingOption } from './tracing.js';
import { formatSizeFlag } from '../size.js';

interface ListenFlags extends FaultFlags {
  config?: string;
  catchUp?: boolean;
  yes?: boolean;
  forwardTo: string[];
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

/**
 * The secret's line: masked unless asked; whether the app can keep it, as the endpoint stays for the next
 * run; how to see it whole without stopping this run, when it is on file.
 */
function secretText(
  secret: string,
  printSecret: boolean,
  { kept, printedBy }: { kept: boolean; printedBy: string | null },
): string {
  const notes = [
    ...(kept ? ['the same on the next run'] : []),
    ...(printSecret ? [] : [printedBy ? `${printedBy} prints it` : '--print-secret to show it']),
  ];
  return `${printSecret ? secret : maskSecret(secret)}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

/**
 * With --host 0.0.0.0 (or ::), the listener's URL as other machines reach it, one per address of this
 * machine's network interfaces (as Vite's "Network" line): the ready line's own is 127.0.0.1's.
 * IPv6 ones only for ::, and not link-local ones, which need a zone to be reached.
 */
export function networkUrls(
  listenerUrl: string,
  host: string,
  interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces(),
): string[] {
  if (!isEveryInterface(host)) return [];
  const addresses = Object.values(interfaces).flatMap((entries) => entries ?? []);
  return addresses
    .filter((a) => !a.internal && (a.family === 'IPv4' || (host === '::' && !a.address.startsWith('fe80:'))))
    .map((a) => {
      const url = new URL(listenerUrl);
      url.hostname = a.family === 'IPv6' ? `[${a.address}]` : a.address;
      return url.href;
    });
}

function printReady(
  ready: ReadyInfo,
  secret: string | null,
  printSecret: boolean,
  secretNotes: { kept: boolean; printedBy: string | null },
  mode: string,
  host: string,
): void {
  const network = networkUrls(ready.listener, host);
  const lines = [
    colour.cyan('clockhook listen is ready'),
    `  Listening   ${ready.listener}`,
    ...(network.length > 0 ? [`  Network     ${network.join(', ')}`] : []),
    ...(ready.routes
      ? ready.routes.map((route, i) => `  ${i === 0 ? 'Routes    ' : '          '}  ${route}`)
      : [
          `  Forwarding  ${ready.forwardTo ?? 'nowhere: capture-only mode, clockhook answers 200 itself (use --forward-to <port|url>)'}`,
        ]),
    `  API         ${ready.apiBase ? `${ready.apiBase}${ready.sandbox ? ' (sandbox)' : ''}` : 'none (offline)'}`,
  ];
  if (ready.endpointId !== null)
    lines.push(`  Endpoint    ${ready.endpointId}${ready.publicUrl ? ` for ${ready.publicUrl}` : ''}`);
  lines.push(
    `  Secret      ${secret ? secretText(secret, printSecret, secretNotes) : 'unknown: signatures are not checked'}`,
  );
  if (ready.inspector) lines.push(`  Inspector   ${ready.inspector}`);
  if (mode === 'sandbox')
    lines.push('', `Send a test delivery from another terminal: ${colour.cyan('npx clockhook trigger punch.created')}`);
  console.log(lines.join('\n'));
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

/** `clockhook listen`: flags → ListenOptions → startListen, printing for people or as NDJSON. */
export function registerListen(program: Command): void {
  withListenExtras(
    program
      .command('listen')
      .description('receive deliveries: verify, capture and forward them to your app')
      .addOption(
        new Option(
          '--forward-to <[types=]url>',
          'your app: 3000, localhost:3000/hooks or a URL; repeat with types= to route by event type',
        )
          .default([] as string[], 'capture-only')
          .argParser((value: string, previous: string[]) => [...previous, value]),
      )
      .option('--port <port>', 'listener port', '4300')
      .option(
        '--time-scale <factor>',
        "the embedded sandbox's retries (1 min, 5 min, 30 min, 2 h) times this: 0.01 turns 1 min into 0.6 s (default: 1)",
      )
      .option('--inspector-port <port>', 'inspector port (127.0.0.1 only)', '4301')
      .option('--sandbox-port <port>', 'embedded sandbox port (a free one if taken)', '4302')
      .option('--host <host>', 'listener address', '127.0.0.1')
      .option('--path <path>', 'deliveries arrive under this path', '/')
      .option(
        '--secret <whsec>',
        "verify with this secret (default: $CLOCKHOOK_SECRET, else the registered endpoint's)",
      )
      .option('--skip-verify', 'forward requests whose signature is invalid or missing')
      .option('--tolerance <seconds>', 'allowed signature age; 0 turns the time check off', '300')
      .option('--timeout <ms>', 'time the app has to answer', '30000'),
  )
    .option('--db <file>', 'capture store (default: $CLOCKHOOK_DB, else .clockhook/captures.json)')
    .option('--max-captures <n>', 'keep only the newest n captures', '1000')
    .option('--max-buffer <size>', 'most request-body bytes held at once (then 503, the service retries)', '64mb')
    .option('--api-key <key>', 'use the real API (default: $CLOCKHOOK_API_KEY; without one an embedded sandbox runs)')
    .option('--api-base <url>', 'API base URL (default: $CLOCKHOOK_API_BASE)')
    .option('--public-url <url>', 'public URL (your tunnel) to register as the endpoint')
    .option('--relay <url>', 'get a public URL from a clockhook relay and register it')
    .option('--relay-give-up <seconds>', 'exit 1 after this long without the relay (default: never)')
    .option('--relay-key <key>', "the relay's access key, when it has keys (default: $CLOCKHOOK_RELAY_KEY)")
    .option('--events <types>', 'comma-separated event types to subscribe to, or *', '*')
    .option('--endpoint <id>', 'use this existing endpoint (with --secret); create nothing')
    .option(
      '--keep-endpoint',
      "do not delete the registered endpoint on exit (the sandbox's endpoint on a fixed --port, and a relay's, are always kept)",
    )
    .option('--print-secret', 'show the secret unmasked')
    .option('--json', 'print NDJSON: a ready line, then one line per delivery')
    .addOption(new Option('--no-inspector', 'do not serve the inspector page'))
    .addOption(new Option('--no-open', 'do not open the inspector in a browser'))
    .allowExcessArguments()
    .option('--config <file>', 'the project config file (default: clockhook.config.json, when there is one)')
    .option('--catch-up', 'redeliver now, through the API, the events that came while listen was off')
    .option('--yes', 'with --catch-up, go on when a redelivery also reaches other endpoints')
    .action((flags: ListenFlags, command: Command) => runListen(flags, command));
}

/**
 * The flags as ListenOptions; `say` prints a line once listen is ready (the ready line comes first); `letGo`
 * is told when the relay let this listener go (it must stop).
 */
function listenOptionsOf(
  flags: ListenFlags,
  say: (print: () => void) => void,
  letGo: (event: RelayEvent) => void,
): ListenOptions {
  return {
    forwardTo: null,
    ...(flags.forwardTo.length > 0 ? { routes: flags.forwardTo } : {}),
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

/** `clockhook listen` itself: starts the session, prints its ready line, and runs until stopped. */
async function runListen(flags: ListenFlags, command: Command): Promise<void> {
  if (command.args.length > 0) throw strayArgumentsError('listen', command.args, flags.forwardTo[0]);
  const config = await applyConfigFile(command, flags as unknown as Record<string, unknown>);
  // The ready line comes first (DESIGN: with --json, the first line is "ready"): what happens while
  // listen starts (the relay's first connection, a delivery that arrived meanwhile) is said after it.
  let beforeReady: (() => void)[] | null = [];
  let letGo: (event: RelayEvent) => void = () => {};
  const relayEnded = new Promise<RelayEvent>((resolve) => (letGo = resolve));
  const options = listenOptionsOf(
    flags,
    (print) => (beforeReady ? beforeReady.push(print) : print()),
    (event) => letGo(event),
  );
  const session = await startListen(options).catch((error: unknown) => {
    throw explainStartFailure(error, options.host ?? '127.0.0.1', options.port ?? 4300);
  });
  // Signals are handled before "ready" is out: whoever stops us right after it gets a clean stop.
  const stopped = onShutdown('listen', () => session.close()).then(() => null);
  if (flags.json)
    printLine({
      ...session.ready,
      ...(config ? { config } : {}),
      ...(flags.printSecret && session.secret ? { secret: session.secret } : {}),
    });
  else {
    const endpoint = { kept: session.endpointKept, printedBy: session.secretCommand };
    if (config) console.log(`Using ${config} (flags on the command line win over it)`);
    printReady(session.ready, session.secret, Boolean(flags.printSecret), endpoint, session.mode, flags.host);
    if (session.ready.faults) console.log(faultsReadyLine(session.ready.faults));
    if (session.ready.tracing)
      console.log(
        `Tracing: each delivery's spans go to ${session.ready.tracing.url} as ${session.ready.tracing.serviceName}`,
      );
  }
  for (const print of beforeReady.splice(0)) print();
  beforeReady = null;
  await reportMissed(session, {
    json: Boolean(flags.json),
    catchUp: Boolean(flags.catchUp),
    yes: Boolean(flags.yes),
  }).catch((error: unknown) =>
    consoleLogger.warn(`Could not read what came while listen was off: ${(error as Error).message}`),
  );
  // Open the page for people at a terminal only: not in CI, not when piped, not when asked not to.
  if (session.ready.inspector && flags.open && !process.env.CI && process.stdout.isTTY) {
    const page = session.ready.inspector;
    import('open').then(({ default: open }) => open(page)).catch(() => {});
  }
  // Stopped by a signal, or let go by the relay: then said, after a clean stop, with exit 1 so scripts notice.
  const ended = await Promise.race([stopped, relayEnded]);
  if (ended) {
    await session.close();
    throw new CliError(relayEndWords(ended));
  }
  const injected = session.listener.injector?.summary();
  if (injected && flags.json) printLine({ event: 'faults', summary: injected });
  else if (injected) console.log(injected);
}

/** Why the relay let this listener go, and what happens now. */
function relayEndWords(event: RelayEvent): string {
  if (event.state === 'replaced')
    return `${event.message} This listener stops; the other one now receives the deliveries.`;
  if (event.state === 'refused') return `The relay let this listener go: ${event.message}`;
  return 'Gave up on the relay (--relay-give-up): it could not be reached for too long.';
}

/** A start that failed on the system (a port, a file): said for people; anything else as it is. */
function explainStartFailure(error: unknown, host: string, port: number): unknown {
  return fileFailure(error, 'the store') ?? bindFailure(error, host, port, 'another clockhook listen') ?? error;
}
