// Plays a scenario: each delivery sent again in its recorded order, signed anew with the secret, at the
// recorded pace (or faster), optionally with faults on purpose; each answer set beside the recorded one.
import { readFile } from 'node:fs/promises';
import { isTaken, LIMITS, resign } from '../contract/index.js';
import { OptionError } from '../errors.js';
import { isHttpUrl, postBytes } from '../http/index.js';
import { faultWords, parseFaults, planOf, seededRandom, type FaultSpec } from '../listener/faults.js';
import { realSleep } from '../sleep.js';
import { type Scenario, type ScenarioDelivery, scenarioProblem } from './scenario.js';
import { whyUnreadable } from '../unreadable.js';

export interface PlayOptions {
  /** The endpoint secret each delivery is signed with, as the service signs. */
  secret: string;
  /** The pace: 1 as recorded, 10 ten times faster, 'max' without waiting between deliveries. @default 1 */
  speed?: number | 'max';
  /** Faults on purpose, as listen --faults takes them: duplicate, delay and fail (with types). */
  faults?: string | FaultSpec;
  /** Draws the faults: the same seed, the same faults. @default random */
  seed?: number;
  /** How long a delivery waits for its answer. @default LIMITS.receiverTimeoutMs (the service's limit) */
  timeoutMs?: number;
  /** Where a delivery goes: the URL given, or one made of its recorded path (through a running listen). */
  urlOf?: (delivery: ScenarioDelivery) => string;
  sleep?: (ms: number) => Promise<void>;
}

/** One delivery as played, beside what it got when it was recorded. */
export interface PlayedDelivery {
  /** Its place in the scenario, from 1. */
  index: number;
  eventId: string | null;
  type: string | null;
  /** What it was when it was recorded: first, retry, duplicate… */
  kind: ScenarioDelivery['kind'];
  recorded: ScenarioDelivery['recorded'];
  /** What it got now: the status (null: no answer, with `error`), or nothing sent (a fault `fail`). */
  played: { status: number | null; durationMs: number; error?: string; sent: boolean };
  /** Faults done to it on purpose: "delay 120 ms", "fail 503", "duplicated". */
  injected?: string[];
  /** Taken (2xx) when it was recorded and not now, or the other way round. */
  differs: boolean;
}

export interface PlayResult {
  deliveries: PlayedDelivery[];
  /** The deliveries answered otherwise than recorded (2xx against not). */
  differences: PlayedDelivery[];
  ok: boolean;
  durationMs: number;
  /** Why the play stopped before its end: nothing answered (connection refused), so the rest was not sent. */
  stopped?: string;
  /** One line for people: how many played, in how long, and which differ. */
  summary: string;
}

/** A scenario given as one, or as the path of its file; refused with the field that is wrong. */
export async function loadScenario(scenario: Scenario | string): Promise<Scenario> {
  let value: unknown = scenario;
  if (typeof scenario === 'string') {
    const text = await readFile(scenario, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new OptionError(`cannot read the scenario ${scenario}: ${whyUnreadable(error)}.`);
    });
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new OptionError(`the scenario ${scenario} is not JSON: ${(error as Error).message}.`);
    }
  }
  const problem = scenarioProblem(value);
  const where = typeof scenario === 'string' ? ` ${scenario}` : '';
  if (problem) throw new OptionError(`the scenario${where} cannot be played: ${problem}.`);
  return value as Scenario;
}

/** Faults a player can do; reorder and timeout need the service's retries, which a scenario records instead. */
function playableFaults(faults: PlayOptions['faults']): FaultSpec | null {
  if (faults === undefined) return null;
  const spec = typeof faults === 'string' ? parseFaults(faults) : faults;
  if (spec.reorder !== undefined || spec.timeout !== undefined)
    throw new OptionError(
      "faults reorder and timeout are listen's, done to the service's deliveries: a scenario plays duplicate, delay and fail (record one through listen --faults to replay the rest).",
    );
  return spec;
}

/** Sends one delivery signed now; its answer's status, or why there is none. */
async function send(url: string, delivery: ScenarioDelivery, secret: string, timeoutMs: number) {
  const body = Buffer.from(delivery.body, delivery.bodyEncoding);
  const headers = resign(delivery.headers, body, { secret });
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const answer = await postBytes(new URL(url), headers, body, { maxChars: 0, rejectUnauthorized: false, signal }).then(
    (res) => ({ status: res.status as number | null }),
    (error: NodeJS.ErrnoException) => ({
      status: null,
      error: signal.aborted ? `no answer within ${timeoutMs} ms` : error.message,
      refused: error.code === 'ECONNREFUSED',
    }),
  );
  const { refused = false, ...said } = answer as typeof answer & { refused?: boolean };
  return { played: { ...said, durationMs: Math.round(performance.now() - started), sent: true }, refused };
}

/** Plays `scenario` to `url`; resolves with each delivery's answer beside the recorded one. */
export async function playScenario(
  scenario: Scenario | string,
  url: string,
  options: PlayOptions,
): Promise<PlayResult> {
  const played = await loadScenario(scenario);
  if (!isHttpUrl(url))
    throw new OptionError(
      `playScenario: ${JSON.stringify(url)} is not an http(s) URL, e.g. http://127.0.0.1:3000/webhooks.`,
    );
  if (typeof options?.secret !== 'string' || options.secret === '')
    throw new OptionError('playScenario: give the endpoint secret the app verifies with: { secret: "whsec_…" }.');
  const speed = options.speed ?? 1;
  if (speed !== 'max' && !(typeof speed === 'number' && speed > 0))
    throw new OptionError(`speed ${String(speed)}: a number over 0 (2: twice as fast) or 'max' (no waits).`);
  const faults = playableFaults(options.faults);
  const random = seededRandom(options.seed ?? Math.floor(Math.random() * 2 ** 32));
  const { sleep = realSleep, timeoutMs = LIMITS.receiverTimeoutMs, urlOf = () => url } = options;
  const started = performance.now();
  const deliveries: PlayedDelivery[] = [];
  let stopped: string | undefined;
  for (const [i, delivery] of played.deliveries.entries()) {
    if (speed !== 'max') await sleep(Math.max(0, started + delivery.at / speed - performance.now()));
    const plan = faults ? planOf(faults, random, delivery.event?.type ?? null) : null;
    if (plan?.delayMs) await sleep(plan.delayMs);
    const { played: answer, refused } = plan?.fail
      ? { played: { status: null, durationMs: 0, sent: false }, refused: false }
      : await send(urlOf(delivery), delivery, options.secret, timeoutMs);
    if (plan?.duplicate && answer.sent) await send(urlOf(delivery), delivery, options.secret, timeoutMs);
    const comparable = answer.sent && delivery.recorded.outcome !== 'pending';
    deliveries.push({
      index: i + 1,
      eventId: delivery.event?.id ?? null,
      type: delivery.event?.type ?? null,
      kind: delivery.kind,
      recorded: delivery.recorded,
      played: answer,
      ...(plan ? { injected: faultWords(plan) } : {}),
      differs: comparable && isTaken(answer.status) !== (delivery.recorded.outcome === '2xx'),
    });
    // Nothing listens there (the app is not started, or stopped): the rest would be refused alike.
    if (refused) {
      const left = played.deliveries.length - i - 1;
      stopped = `nothing answers at ${urlOf(delivery)} (connection refused)${left > 0 ? `, so the ${left} after #${i + 1} were not sent` : ''}: start the app, then play it again`;
      break;
    }
  }
  const durationMs = Math.round(performance.now() - started);
  const differences = deliveries.filter((d) => d.differs);
  return {
    deliveries,
    differences,
    ok: differences.length === 0 && stopped === undefined,
    durationMs,
    ...(stopped === undefined ? {} : { stopped }),
    summary: summaryOf(deliveries, differences, durationMs, stopped),
  };
}

function summaryOf(
  deliveries: PlayedDelivery[],
  differences: PlayedDelivery[],
  durationMs: number,
  stopped?: string,
): string {
  const took = durationMs < 1000 ? `${durationMs} ms` : `${(durationMs / 1000).toFixed(1)} s`;
  const played = `Played ${deliveries.length} ${deliveries.length === 1 ? 'delivery' : 'deliveries'} in ${took}`;
  if (stopped) return `${played}, and stopped: ${stopped}.`;
  if (differences.length === 0) return `${played}: each answered as when it was recorded.`;
  const which = differences.map(
    (d) => `#${d.index} ${d.recorded.status ?? 'no answer'} → ${d.played.status ?? 'no answer'}`,
  );
  return `${played}: ${differences.length} answered otherwise than recorded (${which.join(', ')}).`;
}
