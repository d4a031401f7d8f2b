// A scenario: deliveries as they really came (an event, its retries, a duplicate, in their order and at their
// pace), recorded from the captures to play again in a test (`replay --scenario`, `playScenario`). Versioned,
// with a JSON Schema shipped in the package (clockhook.scenario.schema.json).
import type { Capture, DeliveryKind } from '../store/index.js';
import { fixtureOf } from './fixture.js';
import { type EventStory, type Outcome, outcomeOf, statusOf, withStory } from '../story/index.js';

/** One delivery of a scenario: what was sent (no signature: made anew when it is played) and what it got. */
export interface ScenarioDelivery {
  /** ms after the first delivery of the scenario. */
  at: number;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body: string;
  bodyEncoding: 'utf8' | 'base64';
  /** The envelope's fields; null for a request that is not an event envelope. */
  event: Capture['envelope'];
  /** What it was for its event when it was recorded: first delivery, retry n, duplicate, replay. */
  kind: DeliveryKind;
  retry?: number;
  /** What the app answered when it was recorded (the status the sender got; null: no answer). */
  recorded: { status: number | null; outcome: Outcome };
  /** The capture it was recorded from. */
  capture: string;
}

export interface Scenario {
  clockhookScenario: 1;
  $schema?: string;
  /** When its first delivery came (ISO). */
  recordedAt: string;
  deliveries: ScenarioDelivery[];
}

/** What a scenario file names for its schema by default: the one shipped in the package, from the project's folder. */
export const SCENARIO_SCHEMA = './node_modules/clockhook/clockhook.scenario.schema.json';

/** A scenario of captures (any order: played oldest first) with their whole bodies and their stories. */
export function scenarioOf(
  captures: readonly { capture: Capture; body: Buffer }[],
  stories: ReadonlyMap<string, EventStory>,
  schema = SCENARIO_SCHEMA,
): Scenario {
  const ordered = [...captures].sort((a, b) => (a.capture.id < b.capture.id ? -1 : 1));
  const first = Date.parse(ordered[0]?.capture.receivedAt ?? new Date(0).toISOString());
  return {
    clockhookScenario: 1,
    $schema: schema,
    recordedAt: new Date(first).toISOString(),
    deliveries: ordered.map(({ capture, body }) => {
      const { story } = withStory(capture, stories);
      // What was sent, as a fixture keeps it: without the signature (made anew at each send).
      const { clockhookFixture: _fixture, envelope, ...sent } = fixtureOf(capture, body);
      return {
        at: Date.parse(capture.receivedAt) - first,
        ...sent,
        event: envelope,
        kind: story.kind,
        ...(story.retry === undefined ? {} : { retry: story.retry }),
        recorded: { status: statusOf(capture), outcome: outcomeOf(capture) },
        capture: capture.id,
      };
    }),
  };
}

const KINDS = ['first', 'retry', 'duplicate', 'replay', 'edited-replay'];
const OUTCOMES = ['2xx', 'failed', 'rejected', 'pending'];

/** What is wrong with one delivery, by the name of its field; null when nothing is. */
function deliveryProblem(d: Record<string, unknown>, at: string): string | null {
  const checks: [string, boolean][] = [
    ['at', typeof d.at === 'number' && d.at >= 0],
    ['method', typeof d.method === 'string' && d.method !== ''],
    ['path', typeof d.path === 'string' && d.path.startsWith('/')],
    ['headers', typeof d.headers === 'object' && d.headers !== null && !Array.isArray(d.headers)],
    ['body', typeof d.body === 'string'],
    ['bodyEncoding', d.bodyEncoding === 'utf8' || d.bodyEncoding === 'base64'],
    [
      'event',
      d.event === null || (typeof d.event === 'object' && typeof (d.event as { id?: unknown }).id === 'string'),
    ],
    ['kind', KINDS.includes(d.kind as string)],
    ['recorded', typeof d.recorded === 'object' && d.recorded !== null],
  ];
  const bad = checks.find(([, ok]) => !ok)?.[0];
  if (bad) return `${at}.${bad} is ${bad in d ? 'not valid' : 'missing'}`;
  const recorded = d.recorded as { status?: unknown; outcome?: unknown };
  if (!(recorded.status === null || Number.isInteger(recorded.status))) return `${at}.recorded.status is not valid`;
  if (!OUTCOMES.includes(recorded.outcome as string)) return `${at}.recorded.outcome is not valid`;
  return null;
}

/**
 * What keeps a value read from a file from being a scenario, naming the field (`deliveries[2].body is
 * missing`); null when it is one. The schema shipped in the package says the same.
 */
export function scenarioProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'it is not a JSON object';
  const s = value as Record<string, unknown>;
  if (!('clockhookScenario' in s)) return 'clockhookScenario is missing: it is not a clockhook scenario';
  if (s.clockhookScenario !== 1)
    return `clockhookScenario is ${JSON.stringify(s.clockhookScenario)}: this clockhook plays version 1 (a newer clockhook wrote it?)`;
  if (!Array.isArray(s.deliveries)) return `deliveries is ${'deliveries' in s ? 'not a list' : 'missing'}`;
  if (s.deliveries.length === 0) return 'deliveries is empty: there is nothing to play';
  for (const [i, d] of s.deliveries.entries()) {
    if (typeof d !== 'object' || d === null) return `deliveries[${i}] is not an object`;
    const problem = deliveryProblem(d as Record<string, unknown>, `deliveries[${i}]`);
    if (problem) return problem;
  }
  return null;
}
