export type CheckStatus = 'pass' | 'fail' | 'warn';

export interface CheckResult {
  id: string;
  name: string;
  status: CheckStatus;
  /** What was sent, in words. */
  sent: string;
  /** What came back, in words. */
  got: string;
  /** How to fix it (fail and warn only). */
  hint?: string;
}

export interface CheckReport {
  target: string;
  ok: boolean;
  checks: CheckResult[];
}

export interface CheckOptions {
  target: URL;
  secret: string;
  /** Event types to send valid deliveries of. @default DEFAULT_CHECK_EVENTS */
  events?: string[];
  /** GET <url>?id=<event id> answers how many times the app processed that id. */
  dedupeProbe?: URL;
  /** Per request. @default LIMITS.receiverTimeoutMs (the contract's limit) */
  timeoutMs?: number;
  /** @default API_VERSION (the one clockhook sends) */
  apiVersion?: string;
  /** Answers slower than this are a warning. @default 10000 */
  slowMs?: number;
  /** @default Date.now */
  now?: () => number;
}

/** One type per area the contract names most: enough to show a handler that trips on a type. */
export const DEFAULT_CHECK_EVENTS = [
  'punch.created',
  'employee.updated',
  'time_card.approved',
  'pto_request.approved',
  'shift.published',
];
