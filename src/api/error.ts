import type { ErrorBody, FieldError } from '../contract/index.js';
import { CliError } from '../errors.js';

export interface ApiErrorInit extends ErrorBody {
  /** HTTP status; 0 when no response arrived. */
  status: number;
  method: string;
  url: string;
  /** Seconds from the Retry-After header, on 429s. */
  retryAfter?: number;
}

/** Names the list where the ids of the resource asked for are, by the operation's path. */
function notFoundHint(url: string): string {
  const path = URL.canParse(url) ? new URL(url).pathname : url;
  if (/\/event(\/|$)/.test(path))
    return 'No event with this id in this account: "npx clockhook events list" shows the ids there are.';
  if (/\/webhookEndpoint(\/|$)/.test(path))
    return 'No endpoint with this id in this account: "npx clockhook endpoints list" shows the ids there are.';
  return 'The id does not exist in this account: list them with "npx clockhook endpoints list" or "npx clockhook events list".';
}

/** What to do next, by type and code. Unknown codes fall back to the type's advice. */
function hintFor(init: ApiErrorInit): string {
  switch (init.code) {
    case 'api_key_invalid':
      return 'Check the key (--api-key or CLOCKHOOK_API_KEY): it is missing, mistyped, expired or revoked.';
    case 'legacy_key_unsupported':
      return 'Send the key as "Authorization: Bearer <key>"; the old subscription-key header is not accepted.';
    case 'insufficient_permissions':
      return 'Use a key with the scope this operation needs (webhooks:read/write, events:read/write).';
    case 'resource_not_found':
      return notFoundHint(init.url);
    case 'cannot_redeliver_synthetic_event':
      return 'A ping cannot be redelivered: send a new ping with "npx clockhook endpoints ping <id>".';
    case 'idempotency_conflict':
      return 'Resolve the conflict first (an endpoint with this URL exists already?); a new Idempotency-Key alone does not help.';
    case 'endpoint_limit_reached':
    case 'trial_resource_limit_exceeded':
      return 'Delete endpoints you no longer use ("npx clockhook endpoints list" shows them, with the URL each was made for; "npx clockhook endpoints delete <id>" deletes one), or upgrade the plan.';
    case 'trial_resource_daily_limit_exceeded':
    case 'trial_daily_writes_exceeded':
      return 'Wait for the rolling 24-hour window to free up, or upgrade the plan.';
    case 'rate_limit_exceeded':
    case 'account_rate_limit_exceeded':
      return `Slow down; retry after ${init.retryAfter ?? 'a few'} seconds.`;
    case 'connection_failed':
      return 'Is the service reachable? Check --api-base / CLOCKHOOK_API_BASE, or start a sandbox with "npx clockhook sandbox".';
    default:
      if (init.type === 'invalid_request_error') return 'Correct the request and try again.';
      if (init.status >= 500) return 'The service failed; try again later and quote the requestId if it persists.';
      return 'See the message above.';
  }
}

/**
 * An error answered by the service (its error envelope), or a transport failure shaped like one.
 * `message` is the service's own message; `describe()` gives the full text for people.
 */
export class ApiError extends CliError {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param?: string;
  readonly errors?: FieldError[];
  readonly requestId?: string;
  readonly retryAfter?: number;
  readonly method: string;
  readonly url: string;
  readonly hint: string;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param;
    this.errors = init.errors;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.method = init.method;
    this.url = init.url;
    this.hint = hintFor(init);
  }

  /** The body as the contract's error envelope fields (what the inspector sends to the page). */
  toJSON(): ErrorBody & { status: number } {
    return {
      status: this.status,
      type: this.type,
      code: this.code,
      message: this.message,
      ...(this.param ? { param: this.param } : {}),
      ...(this.errors ? { errors: this.errors } : {}),
      ...(this.requestId ? { requestId: this.requestId } : {}),
    };
  }

  /** What the CLI says of it: a refused key or an unreachable API in one line, else the whole description. */
  override said(): string {
    if (this.status === 401 || this.status === 403)
      return `the API refused the key (${this.status} ${this.code}): ${this.message} ${this.hint}`;
    if (this.code === 'connection_failed') return `the API is unreachable: ${this.message}. ${this.hint}`;
    return `the API call failed\n${this.describe()}`;
  }

  /** Multi-line text for people: `[POST] "url": 404 invalid_request_error resource_not_found`, details, hint. */
  describe(): string {
    const status = this.status === 0 ? 'no response' : String(this.status);
    const items = this.errors ?? [];
    // A message that only joins the field errors (as the sandbox's does) is said by the list alone.
    const itemized = items.length > 0 && items.every((item) => this.message.includes(item.message));
    const lines = [`[${this.method}] "${this.url}": ${status} ${this.type} ${this.code}`];
    if (!itemized) lines.push(`  ${this.message}`);
    if (this.param) lines.push(`  param: ${this.param}`);
    for (const item of items) {
      lines.push(`  - ${item.message.startsWith(`${item.field} `) ? item.message : `${item.field}: ${item.message}`}`);
    }
    if (this.requestId) lines.push(`  requestId: ${this.requestId}`);
    lines.push(`  ${this.hint}`);
    return lines.join('\n');
  }
}
