import type { Capture } from '../store/index.js';
import { type EventStory, isFailedNow, type Outcome, outcomeOf, storiesOf } from '../story/index.js';

export interface CaptureFilter {
  /** These captures only, in the order given. */
  ids?: string[];
  type?: string;
  status?: Outcome;
  /** Only those a `--filter` kept from the app. */
  filtered?: boolean;
  /** Received at or after this (ms since the epoch). */
  since?: number;
  /** At most this many, the newest. */
  limit?: number;
}

/**
 * Whether a capture has a status: `failed` is the one failed set (the newest capture of each event whose
 * newest delivery failed, with no replay taken since, as `replay --failed` and the page's Failed filter take it);
 * `2xx` and `rejected` are what the capture itself got.
 */
function hasStatus(capture: Capture, status: Outcome, stories: ReadonlyMap<string, EventStory>): boolean {
  return status === 'failed' ? isFailedNow(capture, stories) : outcomeOf(capture) === status;
}

/** The captures a filter picks, newest first; `stories`: those of every capture in the store. */
export function selectCaptures(
  captures: readonly Capture[],
  filter: CaptureFilter,
  stories: ReadonlyMap<string, EventStory> = storiesOf(captures),
): Capture[] {
  const byId = new Map(captures.map((c) => [c.id, c]));
  const picked = filter.ids
    ? filter.ids.map((id) => byId.get(id)).filter((c): c is Capture => c !== undefined)
    : [...captures].reverse();
  const chosen = picked.filter(
    (c) =>
      (filter.type === undefined || c.envelope?.type === filter.type) &&
      (filter.status === undefined || hasStatus(c, filter.status, stories)) &&
      (!filter.filtered || c.filtered !== undefined) &&
      (filter.since === undefined || Date.parse(c.receivedAt) >= filter.since),
  );
  return filter.limit === undefined ? chosen : chosen.slice(0, filter.limit);
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: `30s`, `10m`, `2h`, `1d` before `now`, or an ISO time (`2026-11-25T10:00Z`); null when neither. */
export function parseSince(value: string, now: number): number | null {
  const relative = /^(\d+)\s*([smhd])$/.exec(value.trim());
  if (relative) return now - Number(relative[1]) * UNITS[relative[2]];
  if (!/^\d{4}-\d{2}-\d{2}/.test(value.trim())) return null;
  const at = Date.parse(value.trim());
  return Number.isNaN(at) ? null : at;
}
