import { type Command, Option } from 'commander';
import { LISTEN_DEFAULTS } from '../listen/defaults.js';
import type { ListenSession, RelayEvent } from '../listen/index.js';
import { consoleLogger } from '../logger.js';
import { CliError } from '../errors.js';
import { formatSizeFlag } from '../size.js';
import { withWaitForApp } from './app-wait.js';
import { reportMissed } from './catch-up.js';
import { applyConfigFile } from './config.js';
import { faultsReadyLine, withFaults } from './listen-faults.js';
import { startApp, startExec } from './listen-app.js';
import type { AppProcess } from '../listen/app-process.js';
import { type ListenFlags, listenOptionsOf } from './listen-options.js';
import { printReady } from './listen-ready.js';
import { printLine } from './output.js';
import { bindFailure, collect, fileFailure, onShutdown, strayArgumentsError } from './process.js';
import { withTracing } from './tracing.js';
import { RETRY_SCHEDULE } from '../contract/index.js';
import { routeSpecOf } from '../listener/routes.js';

const D = LISTEN_DEFAULTS;

/** listen's flags up to --timeout: where deliveries come and go, and how they are checked. */
function withDeliveryFlags(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--forward-to <[types=]url>',
        'your app: 3000, localhost:3000/hooks or a URL; repeat with types= to route by event type',
      )
        .default([] as string[], 'capture-only')
        .argParser(collect),
    )
    .addOption(
      new Option(
        '--filter <rule>',
        "forward only deliveries that match (repeatable, all must): 'type=punch.*', 'data.employeeId=42', 'header.x-tenant!=test', 'data.note', 'data.email~=@acme'",
      )
        .default([] as string[], 'none')
        .argParser(collect),
    )
    .option('--port <port>', 'listener port', String(D.port))
    .option(
      '--time-scale <factor>',
      `the embedded sandbox's retries (${RETRY_SCHEDULE}) times this: 0.01 turns 1 min into 0.6 s (default: 1)`,
    )
    .option('--inspector-port <port>', 'inspector port (127.0.0.1 only)', String(D.inspectorPort))
    .option('--sandbox-port <port>', 'embedded sandbox port (a free one if taken)', String(D.sandboxPort))
    .option('--host <host>', 'listener address', D.host)
    .option('--path <path>', 'deliveries arrive under this path', D.path)
    .option('--secret <whsec>', "verify with this secret (default: $CLOCKHOOK_SECRET, else the registered endpoint's)")
    .option('--skip-verify', 'forward requests whose signature is invalid or missing')
    .option('--tolerance <seconds>', 'allowed signature age; 0 turns the time check off', String(D.tolerance))
    .option('--timeout <ms>', 'time the app has to answer', String(D.timeoutMs));
}

/** listen's flags for the store, the API and the endpoint, the relay and the page. */
function withSessionFlags(command: Command): Command {
  return command
    .option('--db <file>', 'capture store (default: $CLOCKHOOK_DB, else .clockhook/captures.json)')
    .option('--max-captures <n>', 'keep only the newest n captures', String(D.maxCaptures))
    .option(
      '--max-buffer <size>',
      'most request-body bytes held at once (then 503, the service retries)',
      formatSizeFlag(D.maxBufferedBytes),
    )
    .option('--api-key <key>', 'use the real API (default: $CLOCKHOOK_API_KEY; without one an embedded sandbox runs)')
    .option('--api-base <url>', 'API base URL (default: $CLOCKHOOK_API_BASE)')
    .option('--public-url <url>', 'public URL (your tunnel) to register as the endpoint')
    .option('--relay <url>', 'get a public URL from a clockhook relay and register it')
    .option('--relay-give-up <seconds>', 'exit 1 after this long without the relay (default: never)')
    .option('--relay-key <key>', "the relay's access key, when it has keys (default: $CLOCKHOOK_RELAY_KEY)")
    .option('--events <types>', 'comma-separated event types to subscribe to, or *', D.events.join(','))
    .option('--endpoint <id>', 'use this existing endpoint (with --secret); create nothing')
    .option(
      '--keep-endpoint',
      "do not delete the registered endpoint on exit (the sandbox's endpoint on a fixed --port, and a relay's, are always kept)",
    )
    .option('--print-secret', 'show the secret unmasked')
    .option('--json', 'print NDJSON: a ready line, then one line per delivery')
    .addOption(new Option('--no-inspector', 'do not serve the inspector page'))
    .addOption(new Option('--no-open', 'do not open the inspector in a browser'))
    .option('--config <file>', 'the project config file (default: clockhook.config.json, when there is one)')
    .option(
      '--exec <command>',
      'run this command once per delivery, as the app: the body on its stdin; exit 0 answers 200, any other 500',
    )
    .option(
      '--secret-env <name>',
      'with -- <command>: the environment variable the app reads the secret from',
      'WEBHOOK_SECRET',
    )
    .option('--catch-up', 'redeliver now, through the API, the events that came while listen was off')
    .option('--yes', 'with --catch-up, go on when a redelivery also reaches other endpoints');
}

/** `clockhook listen`: flags → ListenOptions → startListen, printing for people or as NDJSON. */
export function registerListen(program: Command): void {
  const listen = program
    .command('listen')
    .description('receive deliveries: verify, capture and forward them to your app')
    .argument(
      '[command...]',
      "after --: your app's start command, run once listen is ready, with the secret and PORT set",
    );
  withSessionFlags(withTracing(withFaults(withWaitForApp(withDeliveryFlags(listen)))))
    .allowExcessArguments()
    .action((_words: string[], flags: ListenFlags, command: Command) => runListen(flags, command));
}

/** The ready line: NDJSON's first line, or the lines for people (with faults and tracing when on). */
function sayReady(session: ListenSession, flags: ListenFlags, config: string | null): void {
  if (flags.json) {
    const secret = flags.printSecret && session.secret ? { secret: session.secret } : {};
    return printLine({ ...session.ready, ...(config ? { config } : {}), ...secret });
  }
  const endpoint = { kept: session.endpointKept, printedBy: session.secretCommand };
  if (config) console.log(`Using ${config} (flags on the command line win over it)`);
  // Where a secret given without an API key came from: what turns the sandbox off.
  const secretFrom = flags.secret !== undefined ? '--secret' : '$CLOCKHOOK_SECRET';
  const { mode } = session;
  printReady(session.ready, session.secret, Boolean(flags.printSecret), endpoint, {
    mode,
    host: flags.host,
    secretFrom,
  });
  const { faults, tracing } = session.ready;
  if (faults) console.log(faultsReadyLine(faults));
  if (tracing) console.log(`Tracing: each delivery's spans go to ${tracing.url} as ${tracing.serviceName}`);
}

/** What follows `--` on the command line: the app's start command; any other word given is a mistake. */
function appWordsOf(command: Command, flags: ListenFlags): string[] {
  const raw = process.argv;
  const appWords = raw.includes('--') ? raw.slice(raw.indexOf('--') + 1) : [];
  const strays = command.args.slice(0, command.args.length - appWords.length);
  const given = flags.forwardTo[0];
  if (strays.length > 0)
    throw strayArgumentsError('listen', strays, given === undefined ? undefined : routeSpecOf(given));
  return appWords;
}

/** `clockhook listen` itself: starts the session, prints its ready line, and runs until stopped. */
async function runListen(flags: ListenFlags, command: Command): Promise<void> {
  const appWords = appWordsOf(command, flags);
  const config = await applyConfigFile(command, flags as unknown as Record<string, unknown>);
  const appCommand = appWords.length > 0 ? appWords : (flags.command ?? null);
  // The ready line comes first (DESIGN: with --json, the first line is "ready"): what happens while
  // listen starts (the relay's first connection, a delivery that arrived meanwhile) is said after it.
  let beforeReady: (() => void)[] | null = [];
  let letGo: (event: RelayEvent) => void = () => {};
  const relayEnded = new Promise<RelayEvent>((resolve) => (letGo = resolve));
  const say = (print: () => void) => (beforeReady ? beforeReady.push(print) : print());
  // --exec on the command line wins over the config file's routes, as any flag does.
  const routesGiven = command.getOptionValueSource('forwardTo') === 'cli';
  const exec = flags.exec === undefined ? null : await startExec(flags, routesGiven);
  const options = {
    ...listenOptionsOf(flags, say, (event) => letGo(event)),
    ...(exec ? { forwardTo: [exec.url.href] } : {}),
    startsApp: appCommand !== null || exec !== null,
  };
  const { startListen } = await import('../listen/index.js');
  const session = await startListen(options).catch(async (error: unknown) => {
    await exec?.close();
    throw await explainStartFailure(error, options.host ?? D.host, options.port ?? D.port);
  });
  exec?.attach(session, flags.secretEnv);
  // Signals are handled before "ready" is out: whoever stops us right after it gets a clean stop (the app first).
  let app: AppProcess | null = null;
  const stopped = onShutdown('listen', async (signal) => {
    await app?.stop(signal);
    await session.close();
    await exec?.close();
  }).then(() => null);
  sayReady(session, flags, config);
  for (const print of beforeReady.splice(0)) print();
  beforeReady = null;
  const json = Boolean(flags.json);
  if (appCommand) app = startApp(session, appCommand, { secretEnv: flags.secretEnv, json });
  await reportMissed(session, { json, catchUp: Boolean(flags.catchUp), yes: Boolean(flags.yes) }).catch(
    (error: unknown) =>
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
    await app?.stop();
    await session.close();
    await exec?.close();
    throw new CliError(relayEndWords(ended));
  }
  const injected = session.listener.injector?.summary();
  if (injected && json) printLine({ event: 'faults', summary: injected });
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
async function explainStartFailure(error: unknown, host: string, port: number): Promise<unknown> {
  return fileFailure(error, 'the store') ?? (await bindFailure(error, host, port, 'another clockhook listen')) ?? error;
}
