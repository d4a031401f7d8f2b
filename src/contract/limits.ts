// The contract's numbers, each in one place (webhook-contract.md: Delivery, Retry policy, Signature, Limits,
// Versioning), and the few that clockhook chose where the contract is silent, said as such. Every other file
// reads them from here: a number typed again elsewhere is a second rule that drifts (issue 68).

/** The contract's Limits table and Retry policy. */
export const LIMITS = {
  /** Delivery attempts per event and endpoint. */
  deliveryAttempts: 5,
  /** Consecutive failed deliveries that disable an endpoint. */
  consecutiveFailuresToDisable: 10,
  /** Stored receiver response body per attempt. */
  storedResponseBodyChars: 4000,
  /** Expected receiver response time ("answer 2xx within 30 seconds"). */
  receiverTimeoutMs: 30_000,
  /** The replay window suggested for signature checks, either way. */
  replayWindowSeconds: 300,
  /** Retry table: the delay before attempts 1..5, in milliseconds. */
  retryDelaysMs: [0, 60_000, 300_000, 1_800_000, 7_200_000],
} as const;

/** The api_version clockhook's sandbox, signed sends and check put in the envelopes they make. */
export const API_VERSION = '2026-11-01';

/**
 * The largest delivery body the listener takes (413 beyond it). The contract does not say; 5 MiB is far above
 * any envelope the service sends (a resource serialized as its API returns it) and bounds what one request holds.
 */
export const MAX_DELIVERY_BYTES = 5 * 1024 * 1024;

/** The largest REST request body the sandbox reads (not shown in the contract; 1 MiB as most JSON APIs). */
export const MAX_API_REQUEST_BYTES = 1024 * 1024;

/**
 * A duration as a person reads it: "800 ms", "12 s", "5 min", "2 h", "1.5 h". The one formatter of a delay or a
 * wait on every surface (the schedule, "tries again in", a held delivery).
 */
export function durationWords(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}

/** The delay before attempt `attempt` (2..5), times a sandbox's --time-scale; 0 for the first. */
export const retryDelayMs = (attempt: number, timeScale = 1): number =>
  (LIMITS.retryDelaysMs[attempt - 1] ?? 0) * timeScale;

/** The retry schedule in words, from the table: "1 min, 5 min, 30 min, 2 h". */
export const RETRY_SCHEDULE = LIMITS.retryDelaysMs.slice(1).map(durationWords).join(', ');

/** Whether an attempt is the service's last: after it fails, the delivery is marked failed. */
export const isLastAttempt = (attempt: number): boolean => attempt >= LIMITS.deliveryAttempts;

/**
 * The service's next attempt after attempt `attempt` failed, by the retry table: which one, and when it is due
 * (ms since the epoch) where the failed attempt's time is known; null after the last one (the delivery is
 * marked failed). The one rule of what comes next, for the API's attempts and the captures held alike.
 */
export function nextAttemptAfter(
  attempt: number,
  { failedAt = null, timeScale = 1 }: { failedAt?: number | null; timeScale?: number } = {},
): { attempt: number; delayMs: number; dueAt: number | null } | null {
  if (isLastAttempt(attempt)) return null;
  const delayMs = retryDelayMs(attempt + 1, timeScale);
  const dueAt = failedAt === null || Number.isNaN(failedAt) ? null : failedAt + delayMs;
  return { attempt: attempt + 1, delayMs, dueAt };
}
