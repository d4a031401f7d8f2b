import { CliError } from '../errors.js';

/** Whether an error is the disk's having no room (or the user's quota being used up). */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * The disk has no room for what the capture store must write (at start or stop): said as that, naming the
 * path, never as a stack trace. Deliveries meanwhile fail one by one instead (503 capture_failed).
 */
export class DiskFullError extends CliError {
  override readonly name = 'DiskFullError';
  constructor(
    readonly path: string,
    cause: Error,
    /** Bytes the store must write, when known. */
    needed?: number,
  ) {
    super(
      `The disk holding ${path} is full (${(cause as NodeJS.ErrnoException).code}): clockhook could not write its capture store there, which needs ${spaceNeeded(needed)} free. Free some space (or give --db a path on another disk) and start again; nothing it had acknowledged is lost.`,
      { cause },
    );
  }
}

/** How much room a write needs, as people read it: "about 3 MB", or "a few MB" when it is not known. */
export function spaceNeeded(bytes?: number): string {
  if (bytes === undefined || bytes < 1024 * 1024) return 'a few MB';
  return `about ${Math.ceil(bytes / (1024 * 1024)) + 1} MB`;
}
