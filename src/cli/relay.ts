import type { Command } from 'commander';
import { consoleLogger } from '../logger.js';
import type { RelayRequestLog } from '../relay/index.js';
import { CliError, UsageError } from '../errors.js';
import { PAINT, printLine } from './output.js';
import { statusTone } from '../story/index.js';
import { startTracer, tracingOption } from './tracing.js';
import { bindFailure, fromEnv, onShutdown, parsePort, parsePositiveInt, parseSizeFlag } from './process.js';
import { formatSizeFlag } from '../size.js';
import { registerRelayKeys } from './relay-keys.js';
import { whyUnreadable } from '../unreadable.js';

interface RelayFlags {
  otlp?: string;
  port: string;
  host: string;
  publicUrl?: string;
  tlsCert?: string;
  tlsKey?: string;
  maxBody: string;
  maxBuffer: string;
  maxChannels: string;
  redis?: string;
  keys?: string;
  keyMaxChannels: string;
  keyMaxInFlight: string;
  json?: boolean;
}

function requestLine(log: RelayRequestLog): string {
  const status = PAINT[statusTone(log.status)](String(log.status));
  return `${new Date().toTimeString().slice(0, 8)} ${log.channel.slice(0, 8)}… ${log.method} ${log.path} ${status} (${log.durationMs} ms)`;
}

/** `clockhook relay`: the public end of the tunnel, for a small host behind TLS. */
export function registerRelay(program: Command): void {
  const relay = program
    .command('relay')
    .description('run the public relay that gives listeners a URL (listen --relay)')
    .option('--port <port>', 'port to listen on', '8080')
    .option('--host <host>', 'address to bind', '0.0.0.0')
    .option('--public-url <url>', 'the URL senders use, e.g. https://hooks.example.com (default: the bound address)')
    .option('--tls-cert <file>', 'PEM certificate, to serve HTTPS itself')
    .option('--tls-key <file>', 'PEM private key, with --tls-cert')
    .option('--max-body <size>', 'largest body relayed: bytes, or kb/mb', '5mb')
    .option('--max-buffer <size>', 'most body bytes held at once, a quarter of it per channel (then 503)', '256mb')
    .option('--max-channels <n>', 'most channels at once', '1000')
    .option('--redis <url>', 'share channels with the other instances on this Redis (default: $CLOCKHOOK_RELAY_REDIS)')
    .option('--keys <file>', 'without Redis: admit only listeners with a key from this file (relay keys add)')
    .option('--key-max-channels <n>', 'channels one access key may hold at once', '20')
    .option('--key-max-in-flight <n>', "requests in flight on one key's channels, per instance", '256')
    .option(
      '--otlp <url>',
      'export a span of each relayed request over OTLP/HTTP (default: $OTEL_EXPORTER_OTLP_ENDPOINT)',
    )
    .option('--json', 'print NDJSON: a ready line, then one line per relayed request')
    .action((flags: RelayFlags) => runRelay(flags));
  registerRelayKeys(relay);
}

/** --max-body and --max-buffer, checked together. */
function relaySizes(flags: RelayFlags): { maxBody: number; maxBuffered: number } {
  const maxBody = parseSizeFlag(flags.maxBody, '--max-body');
  if (maxBody < 1)
    throw new UsageError(
      `--max-body must be more than 0 bytes (got ${flags.maxBody}): every delivery would get 413. The default is 5mb.`,
    );
  const maxBuffered = parseSizeFlag(flags.maxBuffer, '--max-buffer');
  if (maxBuffered < 4 * maxBody) {
    throw new UsageError(
      `--max-buffer must be at least 4 × --max-body (one channel may hold a quarter of it); with --max-body ${flags.maxBody}, at least ${formatSizeFlag(4 * maxBody)}.`,
    );
  }
  return { maxBody, maxBuffered };
}

/** --public-url: an http(s) origin, since channel URLs are made by appending /c/<channel> to it. */
function checkPublicUrl(publicUrl: string): void {
  const url = URL.canParse(publicUrl) ? new URL(publicUrl) : null;
  if (!url || !/^https?:$/.test(url.protocol))
    throw new UsageError(`--public-url ${publicUrl} is not an http(s) URL; e.g. https://hooks.example.com`);
  // Channel URLs are made by appending /c/<channel>: after a query or a fragment, no request would reach one.
  if (url.search || url.hash || publicUrl.includes('?') || publicUrl.includes('#')) {
    throw new UsageError(
      `--public-url ${publicUrl} has a query or fragment; give the base URL only, e.g. https://hooks.example.com`,
    );
  }
  // The relay serves /connect and /c/<channel> at the root, and listen connects to /connect at the root of --relay.
  if (url.pathname !== '/') {
    throw new UsageError(
      `--public-url ${publicUrl} has a path; the relay serves listeners and deliveries at the root of its host, so give the origin only, e.g. ${url.origin}, and proxy that host name's root to it.`,
    );
  }
}

/** `clockhook relay` itself: starts the relay, prints its ready line, and runs until stopped. */
async function runRelay(flags: RelayFlags): Promise<void> {
  if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) throw new UsageError('--tls-cert and --tls-key go together.');
  const { maxBody, maxBuffered } = relaySizes(flags);
  if (flags.publicUrl !== undefined) checkPublicUrl(flags.publicUrl);
  const port = parsePort(flags.port, '--port');
  const redis = flags.redis ?? fromEnv('CLOCKHOOK_RELAY_REDIS');
  if (redis && flags.keys)
    throw new UsageError(
      '--keys is for a relay without Redis: with --redis the keys are kept in Redis (relay keys add … --redis).',
    );
  if (redis && !/^rediss?:\/\//.test(redis))
    throw new UsageError(`--redis takes a Redis URL, e.g. redis://127.0.0.1:6379/0 (got ${redis}).`);
  const tracer = await startTracer(tracingOption(flags.otlp, 'clockhook-relay'), Boolean(flags.json));
  const { redactedUrl, startRelayServer } = await import('../relay/index.js');
  const relay = await startRelayServer({
    tracer,
    redis,
    keysFile: flags.keys,
    maxChannelsPerKey: parsePositiveInt(flags.keyMaxChannels, '--key-max-channels'),
    maxInFlightPerKey: parsePositiveInt(flags.keyMaxInFlight, '--key-max-in-flight'),
    port,
    host: flags.host,
    publicUrl: flags.publicUrl,
    tlsCert: flags.tlsCert,
    tlsKey: flags.tlsKey,
    maxBody,
    maxBuffered,
    maxChannels: parsePositiveInt(flags.maxChannels, '--max-channels'),
    logger: consoleLogger,
    onRequest: (log) => (flags.json ? printLine(log) : console.log(requestLine(log))),
  }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'EACCES') {
      throw new CliError(
        `cannot read the TLS file ${error.path}: ${whyUnreadable(error)}. Give the PEM files of your certificate (--tls-cert) and its key (--tls-key), or leave both out and let a proxy in front do TLS.`,
      );
    }
    if (/could not reach Redis/.test(String(error.message)))
      throw new CliError(`${error.message}. Is Redis running, and is --redis its URL?`);
    throw (await bindFailure(error, flags.host, port, 'another relay')) ?? error;
  });
  // Signals are handled before "ready" is out: whoever stops us right after it gets a clean stop.
  const stopped = onShutdown('relay', async () => {
    await relay.close();
    await tracer?.shutdown();
  });
  if (flags.json) printLine({ event: 'ready', url: relay.url, publicUrl: relay.publicUrl });
  else {
    console.log(`Relay ready at ${PAINT.info(relay.url)} (public URL ${relay.publicUrl})`);
    if (redis) console.log(`Sharing channels with the other instances on Redis at ${redactedUrl(redis)}`);
    const withKey = redis || flags.keys ? ' --relay-key <key>' : '';
    console.log(`Listeners connect with: npx clockhook listen --relay ${relay.publicUrl}${withKey}`);
  }
  await stopped;
}
