import { resolve } from 'node:path';
import type { Command } from 'commander';
import { connectToListen, replayDirect, type ReplayOutcome } from '../captures/replay.js';
import { selectCaptures } from '../captures/select.js';
import { CONFIG_FILE, readConfigFile } from '../listen/config.js';
import { chooseRoute, parseRoute, routeSpecOf } from '../listener/routes.js';
import { normalizeForwardTarget } from '../listener/target.js';
import type { Capture, StoreReading } from '../store/index.js';
import {
  type CaptureFlags,
  filterOf,
  namedCaptures,
  readStore,
  storePathOf,
  withCaptureFilters,
} from './capture-options.js';
import { UsageError } from '../errors.js';
import { captureLine } from './captures.js';
import { statusWords } from './delivery-line.js';
import { type EventStory, failedToResend, storiesOf } from '../story/index.js';
import { PAINT, printLine, writeLine } from './output.js';
import { fromEnv } from './process.js';
import { describeRecord, recordsOnFile } from './secret.js';
import { isTaken } from '../contract/index.js';
import { readListenDiscovery } from '../folder/index.js';
import { runScenario, type ScenarioFlags } from './play-scenario.js';

interface ReplayFlags extends CaptureFlags, Partial<ScenarioFlags> {
  failed?: boolean;
  dryRun?: boolean;
  asIs?: boolean;
  to?: string;
  secret?: string;
}

/** The target clockhook.config.json's routes give a type, when there is such a file. */
async function configuredTarget(): Promise<((type: string | null) => string | undefined) | null> {
  const config = await readConfigFile(CONFIG_FILE, { optional: true });
  const routes = (config?.forwardTo ?? []).map((route) => parseRoute(routeSpecOf(route)));
  if (routes.length === 0) return null;
  return (type) => {
    const route = chooseRoute(routes, type);
    return route ? normalizeForwardTarget(route.target).href : undefined;
  };
}

/** The captures to send, oldest first; `--failed`: the one failed set (see failedToResend). */
function capturesToReplay(
  reading: StoreReading,
  ids: string[],
  flags: ReplayFlags,
  stories: ReadonlyMap<string, EventStory>,
): Capture[] {
  const filter = filterOf(flags, ids);
  if (ids.length > 0) return namedCaptures(reading, ids);
  if (!flags.failed && filter.type === undefined && filter.since === undefined)
    throw new UsageError(
      'say what to replay: capture ids, --failed, --type or --since (see npx clockhook captures list).',
    );
  const pool = flags.failed ? failedToResend(reading.captures, stories) : reading.captures;
  return selectCaptures(pool, { ...filter, ids: undefined }, stories).reverse();
}

/** The secret a direct replay is re-signed with: --secret, $CLOCKHOOK_SECRET, else the endpoint's on file. */
async function secretForDirect(flags: ReplayFlags): Promise<string | null> {
  const given = flags.secret ?? fromEnv('CLOCKHOOK_SECRET');
  if (given || flags.asIs) return given ?? null;
  const records = await recordsOnFile();
  if (records.length === 1) return records[0].secret;
  throw new UsageError(
    records.length === 0
      ? 'no listen runs here and no endpoint secret is on file to re-sign with: pass --secret whsec_…, or --as-is to send the original signature.'
      : `several endpoint secrets are on file (${records.map(describeRecord).join('; ')}): pass --secret "$(npx clockhook secret <id>)".`,
  );
}

function outcomeLine(capture: Capture, outcome: ReplayOutcome): string {
  const what = capture.envelope?.type ? `${capture.envelope.type} [${capture.envelope.id}]` : capture.method;
  const status = statusWords(outcome.status);
  const recorded = outcome.replayId ? ` as ${outcome.replayId}` : '';
  const mayHaveGone = outcome.ended ? '; whether the app got it shows in captures list once listen runs again' : '';
  const error = outcome.error ? PAINT.bad(` ${outcome.error}${mayHaveGone}`) : '';
  return `replayed ${capture.id} ${what}${recorded}  <-- ${status} ${outcome.target} (${outcome.durationMs} ms)${error}`;
}

/** A scenario plays on its own: captures chosen beside it would be sent in no order with it. */
function playOfScenario(ids: string[], flags: ReplayFlags): Promise<void> {
  const beside = [
    ids.length > 0 && 'capture ids',
    flags.failed && '--failed',
    flags.type !== undefined && '--type',
    flags.since !== undefined && '--since',
    flags.dryRun && '--dry-run',
    flags.asIs && '--as-is',
  ].filter(Boolean);
  if (beside.length > 0)
    throw new UsageError(`--scenario plays a recorded file on its own: leave out ${beside.join(', ')}.`);
  return runScenario(flags as ScenarioFlags, () => secretForDirect(flags));
}

async function runReplay(ids: string[], flags: ReplayFlags): Promise<void> {
  if (flags.scenario === undefined && [flags.speed, flags.faults, flags.faultsSeed].some((v) => v !== undefined))
    throw new UsageError('--speed and --faults are for a scenario: replay --scenario <file> --speed max.');
  // The app's address in the forms --forward-to takes: 3000, localhost:3000/hooks, or a URL.
  if (flags.to !== undefined) flags.to = normalizeForwardTarget(flags.to, '--to').href;
  if (flags.scenario !== undefined) return playOfScenario(ids, flags);
  const reading = await readStore(flags);
  const stories = storiesOf(reading.captures);
  const captures = capturesToReplay(reading, ids, flags, stories);
  if (captures.length === 0) {
    console.error(
      flags.failed
        ? 'Nothing to replay: no event failed (the newest delivery of each, or a replay since, got a 2xx).'
        : 'Nothing to replay.',
    );
    return;
  }
  if (flags.dryRun) {
    for (const capture of captures)
      if (flags.json)
        printLine({ event: 'would-replay', captureId: capture.id, eventId: capture.envelope?.id ?? null });
      else writeLine(captureLine(capture, stories));
    return;
  }
  const listen = flags.to ? null : await readListenDiscovery();
  const through =
    listen?.inspector && listen.db === resolve(storePathOf(flags)) ? await connectToListen(listen.inspector) : null;
  const secret = through ? null : await secretForDirect(flags);
  // A capture forwarded nowhere (capture-only, refused) goes to the project's app, as clockhook.config.json routes it.
  const configured = through || flags.to ? null : await configuredTarget();
  let allTaken = true;
  try {
    for (const capture of captures) {
      const target = flags.to ?? capture.forward?.target ?? configured?.(capture.envelope?.type ?? null);
      if (!through && !target)
        throw new UsageError(
          `${capture.id} was not forwarded anywhere: say where to send it with --to <your app's URL>.`,
        );
      const outcome = through
        ? await through.replay(capture, { asIs: Boolean(flags.asIs) })
        : await replayDirect(capture, await reading.body(capture), {
            target: target as string,
            secret,
            asIs: Boolean(flags.asIs),
          });
      allTaken &&= isTaken(outcome.status);
      if (flags.json) printLine({ event: 'replay', via: through ? 'listen' : 'direct', ...outcome });
      else writeLine(outcomeLine(capture, outcome));
    }
  } finally {
    through?.close();
  }
  // Exit 1 unless every replay was taken, so a CI step can replay failures against a fixed handler.
  if (!allTaken) process.exitCode = 1;
}

/** `clockhook replay`: sends captures to the app again, through a running listen or straight to it. */
export function registerReplay(program: Command): void {
  withCaptureFilters(
    program
      .command('replay [capture-ids...]')
      .description('send captures to your app again (through a running listen, else straight to it)'),
    { status: false },
  )
    .option(
      '--failed',
      'each event whose newest delivery failed, with no replay taken since (its newest delivery is sent)',
    )
    .option('--dry-run', 'list what would be sent, and send nothing')
    .option('--as-is', 'the original bytes and signature, not re-signed with the current time')
    .option('--to <url>', 'send here instead (default: through listen, else where each was forwarded)')
    .option('--secret <whsec>', "re-sign with this secret (default: $CLOCKHOOK_SECRET, else the endpoint's on file)")
    .option('--json', 'one JSON line per replay')
    .option('--scenario <file>', 'play a recorded scenario (captures export --format scenario) in its order and pace')
    .option('--speed <n|max>', 'scenario: 1 as recorded, 10 ten times faster, max without waits')
    .option('--faults <spec>', 'scenario: faults on purpose, e.g. duplicate=10%,delay=100-500,fail=5%')
    .option('--faults-seed <n>', 'scenario: repeat the faults of an earlier play (its summary says its seed)')
    .action((ids: string[], flags: ReplayFlags) => runReplay(ids, flags));
}
