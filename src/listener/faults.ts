import { patternProblem, routeTakes } from './routes.js';
import { OptionError } from '../errors.js';

/**
 * `listen --faults`: faults injected on purpose, to test that a handler survives what the service may do
 * (docs/faults.md). Probabilities are 0 to 1; times in ms.
 */
export interface FaultSpec {
  /** After the app answers, the same delivery again (same body and event id, a fresh signature). */
  duplicate?: number;
  /** Each delivery held this long (a range: a time drawn in it) before it is forwarded. */
  delay?: { min: number; max: number };
  /** Deliveries arriving within this window are held, and forwarded one at a time in another order. */
  reorder?: number;
  /** Answered `status` without forwarding, so that the service's retry schedule runs. */
  fail?: { p: number; status: number };
  /** Forwarded, but the sender is answered only after its time limit: it retries what the app took. */
  timeout?: number;
  /** Only deliveries of these types (`punch.*`, `time_card.approved`); null: every type. */
  types: string[] | null;
}

/** What is done to one delivery. */
export interface FaultPlan {
  duplicate?: true;
  delayMs?: number;
  reorder?: true;
  fail?: number;
  timeout?: true;
}

/** Reorder and delays stay well under the service's 30 s limit, with room for the app's own time. */
const MAX_HOLD_MS = 20_000;
const EXAMPLE = 'e.g. --faults duplicate=10%,delay=100-500,types=punch.*';

function probability(name: string, value: string): number {
  const percent = value.endsWith('%');
  const n = Number(percent ? value.slice(0, -1) : value) / (percent ? 100 : 1);
  if (value === '' || value === '%' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new OptionError(
      `--faults ${name}=${value}: a probability is a fraction from 0 to 1 or a percentage (0.1 or 10%).`,
    );
  return n;
}

function milliseconds(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > MAX_HOLD_MS)
    throw new OptionError(
      `--faults ${name}=${value}: a whole number of ms up to ${MAX_HOLD_MS} (under the service's 30 s limit).`,
    );
  return n;
}

function typesOf(value: string): string[] | null {
  const types = value.split('|');
  const problem = types.map(patternProblem).find(Boolean);
  if (problem) throw new OptionError(`--faults types=${value}: ${problem}; several are joined with |.`);
  return types.includes('*') ? null : types;
}

const PARSERS: Record<string, (spec: FaultSpec, value: string) => void> = {
  duplicate: (spec, value) => (spec.duplicate = probability('duplicate', value)),
  timeout: (spec, value) => (spec.timeout = probability('timeout', value)),
  reorder: (spec, value) => (spec.reorder = Math.max(1, milliseconds('reorder', value))),
  delay: (spec, value) => {
    const [min, max = min] = value.split('-');
    spec.delay = { min: milliseconds('delay', min), max: milliseconds('delay', max) };
    if (spec.delay.max < spec.delay.min) throw new OptionError(`--faults delay=${value}: write the range low-high.`);
  },
  fail: (spec, value) => {
    const [p, status = '503'] = value.split(':');
    if (!/^[45]\d\d$/.test(status))
      throw new OptionError(
        `--faults fail=${value}: the status is a 4xx or 5xx the sender is answered (503 by default).`,
      );
    spec.fail = { p: probability('fail', p), status: Number(status) };
  },
  types: (spec, value) => (spec.types = typesOf(value)),
};

/** Parses `duplicate=10%,delay=100-500,fail=0.2:500,types=punch.*|shift.*`; a TypeError says what is wrong. */
export function parseFaults(text: string): FaultSpec {
  const spec: FaultSpec = { types: null };
  for (const part of text.split(',').map((p) => p.trim())) {
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    const parse = PARSERS[name];
    if (!parse || eq === -1) {
      const known = Object.keys(PARSERS).join(', ');
      throw new OptionError(`--faults: "${part}" is not a fault; each is name=value, the names ${known} (${EXAMPLE}).`);
    }
    parse(spec, part.slice(eq + 1));
  }
  if (Object.keys(spec).length === 1) throw new OptionError(`--faults names no fault (${EXAMPLE}).`);
  return spec;
}

/** A seeded pseudo-random generator (mulberry32): the same seed draws the same numbers, so a run can be repeated. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Decides each delivery's faults, in the order deliveries arrive. Every delivery of a type the faults take
 * draws the same number of times whatever it gets, so that the same seed and the same deliveries give the
 * same faults. A failed delivery gets nothing else: it is never forwarded.
 */
export function planOf(spec: FaultSpec, random: () => number, type: string | null): FaultPlan | null {
  if (spec.types !== null && (type === null || !routeTakes(spec.types, type))) return null;
  const [fail, duplicate, timeout, delay] = [random(), random(), random(), random()];
  if (spec.fail && fail < spec.fail.p) return { fail: spec.fail.status };
  const plan: FaultPlan = {};
  if (spec.duplicate && duplicate < spec.duplicate) plan.duplicate = true;
  if (spec.timeout && timeout < spec.timeout) plan.timeout = true;
  if (spec.delay) plan.delayMs = Math.round(spec.delay.min + delay * (spec.delay.max - spec.delay.min));
  if (spec.reorder) plan.reorder = true;
  return Object.keys(plan).length > 0 ? plan : null;
}

/** The words a capture carries for its faults (`injected`): "delay 120 ms", "fail 503", … */
export function faultWords(plan: FaultPlan): string[] {
  return [
    ...(plan.fail ? [`fail ${plan.fail}`] : []),
    ...(plan.delayMs !== undefined ? [`delay ${plan.delayMs} ms`] : []),
    ...(plan.reorder ? ['reorder'] : []),
    ...(plan.timeout ? ['timeout'] : []),
    ...(plan.duplicate ? ['duplicated'] : []),
  ];
}

/** The spec as the user would write it, for the ready line. */
export function faultsText(spec: FaultSpec): string {
  const pct = (p: number) => `${Math.round(p * 1000) / 10}%`;
  return [
    ...(spec.duplicate !== undefined ? [`duplicate=${pct(spec.duplicate)}`] : []),
    ...(spec.delay
      ? [`delay=${spec.delay.min === spec.delay.max ? spec.delay.min : `${spec.delay.min}-${spec.delay.max}`}`]
      : []),
    ...(spec.reorder !== undefined ? [`reorder=${spec.reorder}`] : []),
    ...(spec.fail ? [`fail=${pct(spec.fail.p)}:${spec.fail.status}`] : []),
    ...(spec.timeout !== undefined ? [`timeout=${pct(spec.timeout)}`] : []),
    ...(spec.types ? [`types=${spec.types.join('|')}`] : []),
  ].join(',');
}
