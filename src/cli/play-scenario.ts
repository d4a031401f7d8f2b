// `clockhook replay --scenario`: plays a recorded scenario to the app (--to), or through a running listen so
// that the page shows it, and says of each delivery what it got beside what it got when it was recorded.
import type { PlayedDelivery } from '../captures/index.js';
import { UsageError } from '../errors.js';
import { readListenDiscovery } from '../folder/index.js';
import { faultsText } from '../listener/faults.js';
import { statusWords } from './delivery-line.js';
import { faultsOption, type FaultFlags, faultsReadyLine } from './listen-faults.js';
import { PAINT, printLine, writeLine } from './output.js';

export interface ScenarioFlags extends FaultFlags {
  scenario: string;
  to?: string;
  speed?: string;
  json?: boolean;
}

/** `--speed`: 1 as recorded, 10 ten times faster, max without waits. */
function speedOf(text: string | undefined): number | 'max' {
  if (text === undefined) return 1;
  if (text === 'max') return 'max';
  const speed = Number(text);
  if (!Number.isFinite(speed) || speed <= 0)
    throw new UsageError(`--speed ${text}: a number over 0 (2: twice as fast as recorded) or max (no waits).`);
  return speed;
}

/** One delivery played, for people: what it is, the recorded answer, the one it got now. */
function playedLine(d: PlayedDelivery): string {
  const kind = d.kind === 'first' ? 'first delivery' : `a ${d.kind}`;
  const what = d.type ? `${d.type} [${d.eventId}], ${kind}` : 'not an event';
  const now = d.played.sent ? `${statusWords(d.played.status)} (${d.played.durationMs} ms)` : 'not sent';
  const injected = d.injected?.length ? PAINT.warn(` faults: ${d.injected.join(', ')}`) : '';
  const error = d.played.error ? PAINT.bad(` ${d.played.error}`) : '';
  const differs = d.differs ? PAINT.bad('  differs from the recording') : '';
  return `#${d.index} ${what}: recorded ${statusWords(d.recorded.status)}, now ${now}${error}${injected}${differs}`;
}

/** Where the deliveries go: --to, else the running listen's listener at each one's recorded path. */
async function destination(flags: ScenarioFlags): Promise<{ url: string; throughListen: boolean }> {
  if (flags.to !== undefined) return { url: flags.to, throughListen: false };
  const listen = await readListenDiscovery();
  if (!listen)
    throw new UsageError(
      'no listen runs here to play the scenario through: start npx clockhook listen, or send it straight to your app with --to <url>.',
    );
  return { url: listen.listener, throughListen: true };
}

/** Plays `flags.scenario`; exit 1 when a delivery was answered otherwise (2xx or not) than recorded. */
export async function runScenario(flags: ScenarioFlags, secretOf: () => Promise<string | null>): Promise<void> {
  const speed = speedOf(flags.speed);
  const faults = faultsOption(flags);
  const { loadScenario, playScenario } = await import('../captures/index.js');
  const scenario = await loadScenario(flags.scenario);
  const { url, throughListen } = await destination(flags);
  const secret = await secretOf();
  if (!secret) throw new UsageError('a scenario is re-signed as it plays: pass --secret whsec_…');
  const result = await playScenario(scenario, url, {
    secret,
    speed,
    ...(faults ? { faults: faults.spec, seed: faults.seed } : {}),
    // Through listen, each delivery goes to the path it came to (listen routes by path and by type).
    ...(throughListen ? { urlOf: (delivery) => new URL(delivery.path, url).href } : {}),
  });
  for (const delivery of result.deliveries)
    if (flags.json) printLine({ event: 'played', ...delivery });
    else writeLine(playedLine(delivery));
  if (flags.json)
    printLine({
      event: 'summary',
      ok: result.ok,
      played: result.deliveries.length,
      differences: result.differences.map((d) => d.index),
      durationMs: result.durationMs,
      ...(faults ? { faultsSeed: faults.seed } : {}),
    });
  else {
    if (faults) writeLine(faultsReadyLine({ spec: faultsText(faults.spec), seed: faults.seed }, 'Faults'));
    writeLine(result.ok ? PAINT.ok(result.summary) : PAINT.bad(result.summary));
  }
  if (!result.ok) process.exitCode = 1;
}
