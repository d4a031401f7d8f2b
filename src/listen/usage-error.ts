import { ClockhookError } from '../errors.js';

/** A mistake in the options: the CLI turns it into exit code 2. */
export class ListenUsageError extends ClockhookError {
  override readonly name = 'ListenUsageError';
  get exitCode(): 2 {
    return 2;
  }
}
