import type { UsageRecord } from './state.js';

const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** Sandbox values for the contract's trial caps (DESIGN.md; the service does not publish its own). */
export const TRIAL_CAPS = {
  endpointsTotal: 5,
  endpointCreationsPerDay: 20,
  writesPerDay: 200,
} as const;

/** Per-key guard, all plans (contract: Limits). */
export const PER_KEY_PER_MINUTE = 1000;
/** DESIGN.md: endpoint_limit_reached at 16 endpoints per account. */
export const ENDPOINTS_PER_ACCOUNT = 16;

/** A sliding one-minute window per name; in memory, as a real rate limiter's state would be. */
export class MinuteWindow {
  readonly #hits = new Map<string, number[]>();

  /** Records a hit unless `limit` hits already happened in the last minute; returns seconds to wait, or 0. */
  take(name: string, limit: number, now: number): number {
    const hits = (this.#hits.get(name) ?? []).filter((at) => at > now - MINUTE_MS);
    this.#hits.set(name, hits);
    if (hits.length >= limit) return Math.max(1, Math.ceil((hits[0] + MINUTE_MS - now) / 1000));
    hits.push(now);
    return 0;
  }
}

/** How many usage entries of a kind an account has in the rolling 24 hours before `now`. */
export function usageInLastDay(usage: UsageRecord[], account: string, kind: UsageRecord['kind'], now: number): number {
  return usage.filter((u) => u.account === account && u.kind === kind && u.at > now - DAY_MS).length;
}
