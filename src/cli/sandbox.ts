import type { Command } from 'commander';
import { API_VERSION, isApiVersionLabel, LIMITS, nextAttemptAfter } from '../contract/index.js';
import type { AttemptReport } from '../sandbox/index.js';
import { consoleLogger } from '../logger.js';
import { UsageError } from '../errors.js';
import { PAINT, printLine } from './output.js';
import { bindFailure, fileFailure, onShutdown, parseFetchablePort, parseTimeScale } from './process.js';
import { nextWords, statusTone } from '../story/index.js';
import { folderFiles } from '../folder/index.js';

interface SandboxFlags {
  port: string;
  host: string;
  db: string;
  timeScale: string;
  apiVersion: string;
  json?: boolean;
}

function attemptLine(report: AttemptReport, timeScale: number): string {
  const status = report.statusCode === null ? report.error : String(report.statusCode);
  const painted = PAINT[statusTone(report.statusCode)](String(status));
  const next = nextAttemptAfter(report.attempt, { failedAt: Date.now(), timeScale });
  const tail = report.outcome === 'delivered' ? '' : ` (${nextWords(next)})`;
  const disabled = report.endpointDisabled
    ? PAINT.bad(
        ` endpoint ${report.endpointId} disabled after ${LIMITS.consecutiveFailuresToDisable} failed deliveries in a row`,
      )
    : '';
  return `${new Date().toISOString().slice(11, 19)} ${report.type} ${report.eventId} -> #${report.endpointId} ${report.url} attempt ${report.attempt}: ${painted} (${report.durationMs} ms)${tail}${disabled}`;
}

/** `clockhook sandbox`: runs the local emulator of the service until interrupted. */
export function registerSandbox(program: Command): void {
  program
    .command('sandbox')
    .description("run a local emulator of the service's webhook API and delivery worker")
    .option('--port <port>', 'port of the REST API', '4302')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--db <file>', 'state file', folderFiles().sandboxState)
    .option('--time-scale <factor>', 'multiply retry delays (0.001 turns 1 min into 60 ms)', '1')
    .option('--api-version <date>', 'api_version of the envelopes it sends', API_VERSION)
    .option('--json', 'print NDJSON: a ready line, then one line per delivery attempt')
    .action(async (flags: SandboxFlags) => {
      const port = parseFetchablePort(flags.port, '--port', 'fetch, which clockhook calls the sandbox with,');
      const timeScale = parseTimeScale(flags.timeScale);
      if (!isApiVersionLabel(flags.apiVersion))
        throw new UsageError(`--api-version must be a date YYYY-MM-DD (got ${flags.apiVersion}).`);

      const { startSandbox } = await import('../sandbox/index.js');
      const sandbox = await startSandbox({
        port,
        host: flags.host,
        dbPath: flags.db,
        timeScale,
        apiVersion: flags.apiVersion,
        logger: consoleLogger,
        onAttempt: (report) =>
          flags.json ? printLine({ event: 'attempt', ...report }) : console.log(attemptLine(report, timeScale)),
      }).catch(async (error: NodeJS.ErrnoException) => {
        throw (
          fileFailure(error, 'the state') ?? (await bindFailure(error, flags.host, port, 'another sandbox')) ?? error
        );
      });

      // Signals are handled before "ready" is out: whoever stops us right after it gets a clean stop.
      const stopped = onShutdown('sandbox', () => sandbox.close());
      if (flags.json) {
        printLine({ event: 'ready', apiBase: sandbox.apiBase, apiKey: sandbox.apiKey, account: sandbox.account });
      } else {
        console.log(`Sandbox ready at ${PAINT.info(sandbox.apiBase)}`);
        console.log(`API key (full scope, account ${sandbox.account}, pro plan): ${sandbox.apiKey}`);
        console.log('Other clockhook commands in this folder find it by themselves. Ctrl-C to stop.');
      }
      await stopped;
    });
}
