import type { Capture } from '../store/index.js';

/** What became of a capture: the app took it (or clockhook answered 200 with no app), did not, or clockhook refused it. */
export type Outcome = '2xx' | 'failed' | 'rejected' | 'pending';
export const OUTCOMES: readonly Outcome[] = ['2xx', 'failed', 'rejected'];

export function outcomeOf(capture: Capture): Outcome {
  if (capture.rejected) return 'rejected';
  if (capture.forward === null) return '2xx';
  if (capture.forward === undefined) return 'pending';
  const status = capture.forward.statusCode;
  return status !== null && status >= 200 && status < 300 ? '2xx' : 'failed';
}

/** The status the sender got, when it is known (not for an app that did not answer). */
export function statusOf(capture: Capture): number | null {
  if (capture.rejected) return capture.rejected.statusCode;
  if (capture.forward === null) return 200;
  return capture.forward?.statusCode ?? null;
}

export interface CaptureFilter {
  /** These captures only, in the order given. */
  ids?: string[];
  type?: string;
  status?: Outcome;
  /** Received at or after this (ms since the epoch). */
  since?: number;
  /** At most this many, the newest. */
  limit?: number;
}

/** The captures a filter picks, newest first. */
export function selectCaptures(captures: readonly Capture[], filter: CaptureFilter): Capture[] {
  const byId = new Map(captures.map((c) => [c.id, c]));
  const picked = filter.ids
    ? filter.ids.map((id) => byId.get(id)).filter((c): c is Capture => c !== undefined)
    : [...captures].reverse();
  const chosen = picked.filter(
    (c) =>
      (filter.type === undefined || c.envelope?.type === filter.type) &&
      (filter.status === undefined || outcomeOf(c) === filter.status) &&
      (filter.since === undefined || Date.parse(c.receivedAt) >= filter.since),
  );
  return filter.limit === undefined ? chosen : chosen.slice(0, filter.limit);
}

/**
 * The captures to replay for `--failed`: of each event (its envelope id), the latest delivery when the
 * event's latest capture (a retry, a redelivery or a replay included) failed; a capture with no envelope
 * id stands alone. Oldest first. An event that failed once and was taken later is not among them.
 */
export function latestFailures(captures: readonly Capture[]): Capture[] {
  const latest = new Map<string, Capture>();
  const deliveries = new Map<string, Capture>();
  for (const capture of captures) {
    const key = capture.envelope?.id ?? capture.id;
    latest.set(key, capture);
    if (capture.source === 'delivery') deliveries.set(key, capture);
  }
  const failed: Capture[] = [];
  for (const [key, capture] of latest) {
    if (outcomeOf(capture) !== 'failed') continue;
    failed.push(deliveries.get(key) ?? capture);
  }
  return failed.sort((a, b) => (a.id < b.id ? -1 : 1));
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
