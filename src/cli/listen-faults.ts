// listen's flags for an app that restarts, for faults on purpose and for tracing (--wait-for-app, --faults,
// --faults-seed, --otlp, --trace-url), and what it says of them: the app going down and coming back, the
// faults in its ready line and at exit, spans that stop reaching the collector.
import { randomInt } from 'node:crypto';
import type { Command } from 'commander';
import { type AppStateEvent, type FaultsOption, parseFaults, SERVICE_LIMIT_SECONDS } from '../listener/index.js';
import { UsageError } from '../errors.js';
import { colour, printLine, writeLine } from './output.js';

export interface FaultFlags {
  waitForApp: string;
  faults?: string;
  faultsSeed?: string;
  otlp?: string;
  traceUrl?: string;
}

/** `--wait-for-app <seconds>` in ms: 0 turns it off; the service's 30 s limit is its bound. */
export function waitForAppMs(value: string): number {
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds < 0)
    throw new UsageError(`--wait-for-app must be a number of seconds, 0 to turn it off (got ${value}).`);
  if (seconds >= SERVICE_LIMIT_SECONDS)
    throw new UsageError(
      `--wait-for-app ${value}: the service gives a delivery ${SERVICE_LIMIT_SECONDS} s, and counts it failed after that; wait less (10 s by default), so that the app still has time to answer.`,
    );
  return Math.round(seconds * 1000);
}

/** `--faults <spec>` with `--faults-seed <n>` (a random one when not given, printed so that a run can be repeated). */
export function faultsOption(flags: FaultFlags): FaultsOption | null {
  if (flags.faults === undefined) {
    if (flags.faultsSeed !== undefined)
      throw new UsageError('--faults-seed repeats the faults of --faults: give both.');
    return null;
  }
  let spec;
  try {
    spec = parseFaults(flags.faults);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const seed = flags.faultsSeed === undefined ? randomInt(2 ** 31) : Number(flags.faultsSeed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 4_294_967_295)
    throw new UsageError(`--faults-seed must be a whole number from 0 to 4294967295 (got ${flags.faultsSeed}).`);
  return { spec, seed };
}

/** What listen says when the app stops answering and when it is back: one line each, for people or as JSON. */
export function sayAppState(event: AppStateEvent, json: boolean): void {
  if (json) return printLine({ event: 'app', ...event });
  const where = event.target.replace(/^https?:\/\/(127\.0\.0\.1|localhost)/, '');
  if (event.state === 'down')
    writeLine(
      colour.yellow(
        `app not answering on ${where}: holding deliveries for up to ${event.waitMs / 1000} s (--wait-for-app)`,
      ),
    );
  else writeLine(colour.green(`app back after ${Math.round(event.downMs / 100) / 10} s: ${event.delivered} delivered`));
}

/** The faults line after the ready line, for people. */
export function faultsReadyLine(faults: { spec: string; seed: number }): string {
  return colour.yellow(
    `Injecting faults: ${faults.spec} (seed ${faults.seed}: --faults-seed ${faults.seed} repeats them). See docs/faults.md.`,
  );
}

/** listen's flags for an app that restarts, faults on purpose and tracing, after --timeout in its help. */
export function withListenExtras(command: Command): Command {
  return command
    .option(
      '--wait-for-app <seconds>',
      'hold deliveries this long for an app that is not answering (restarting); 0: off',
      '10',
    )
    .option(
      '--faults <spec>',
      'inject faults to test your handler: duplicate=10%,delay=100-500,reorder=200,fail=5%,timeout=1%',
    )
    .option('--faults-seed <n>', 'repeat the faults of an earlier run (its ready line says its seed)')
    .option(
      '--otlp <url>',
      'export a trace of each delivery over OTLP/HTTP to this collector (default: $OTEL_EXPORTER_OTLP_ENDPOINT)',
    )
    .option('--trace-url <template>', "the page links each trace there: 'http://localhost:16686/trace/{traceId}'");
}
