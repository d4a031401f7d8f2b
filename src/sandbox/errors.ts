import type { ErrorBody, ErrorType, FieldError } from '../contract/index.js';
import { CliError } from '../errors.js';

/** An error the sandbox answers with, in the contract's envelope. */
export class SandboxError extends CliError {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly extra: { param?: string; errors?: FieldError[]; retryAfter?: number } = {},
  ) {
    super(message);
  }

  body(requestId: string): { error: ErrorBody } {
    const { param, errors } = this.extra;
    return {
      error: {
        type: this.type,
        code: this.code,
        message: this.message,
        ...(param ? { param } : {}),
        ...(errors ? { errors } : {}),
        requestId,
      },
    };
  }
}

export const invalidParam = (param: string, message: string, errors: FieldError[] = [{ field: param, message }]) =>
  new SandboxError(400, 'invalid_request_error', 'parameter_invalid', message, { param, errors });

export const notFound = (what: string) =>
  new SandboxError(
    404,
    'invalid_request_error',
    'resource_not_found',
    `No such ${what}. It does not exist or belongs to another account.`,
  );

export const rateLimited = (code: string, message: string, retryAfter: number) =>
  new SandboxError(429, 'rate_limit_error', code, message, { retryAfter });
