import { UsageError } from '../errors.js';

/** A mistake in the options: the CLI turns it into exit code 2. */
export class ListenUsageError extends UsageError {
  override readonly name = 'ListenUsageError';
}
