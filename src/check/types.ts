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

/**
 * How the caller's surface names what a hint asks the user to change: the CLI's flags, the MCP tool's arguments,
 * the testing library's options. A hint never names a flag to a caller that takes none.
 */
export interface CheckWords {
  /** How to give the receiver's URL: `--forward-to <url>` on the CLI, the MCP tool's `url`, checkReceiver's. */
  target: (url: string) => string;
  /** How to have duplicates checked with a probe (a sentence's start: "… to have this checked."). */
  dedupeProbe: string;
}

/** The CLI's words (`clockhook check`): the default. */
export const CHECK_FLAG_WORDS: CheckWords = {
  target: (url) => `--forward-to ${url}`,
  dedupeProbe: 'Pass --dedupe-probe <url> (answering GET <url>?id=<event id> with how many times the id was processed)',
};

export interface CheckOptions {
  /** How hints name what to change. @default CHECK_FLAG_WORDS */
  words?: CheckWords;
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
