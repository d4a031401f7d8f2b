/** The contract's error envelope: `{ "error": { type, code, message, param?, errors?, requestId } }`. */

export type ErrorType =
  'invalid_request_error' | 'authentication_error' | 'authorization_error' | 'rate_limit_error' | 'api_error';

export interface FieldError {
  field: string;
  message: string;
}

export interface ErrorBody {
  /** Category: retry decisions are made on it. Unknown values are shown as they come. */
  type: ErrorType | string;
  code: string;
  /** Human-readable; may change, never matched on. */
  message: string;
  param?: string;
  errors?: FieldError[];
  requestId?: string;
}

export interface ErrorEnvelope {
  error: ErrorBody;
}

/** The rate-limit codes whose Retry-After frees them (contract: Retry strategy). */
export const RETRYABLE_RATE_LIMIT_CODES = ['rate_limit_exceeded', 'account_rate_limit_exceeded'] as const;
/** Trial caps: never retried in a loop, Retry-After does not free them. */
export const TRIAL_CAP_CODES = [
  'trial_resource_limit_exceeded',
  'trial_resource_daily_limit_exceeded',
  'trial_daily_writes_exceeded',
] as const;

export function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
  if (typeof value !== 'object' || value === null) return false;
  const error = (value as { error?: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as ErrorBody).code === 'string' &&
    typeof (error as ErrorBody).type === 'string'
  );
}
