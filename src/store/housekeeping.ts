import type { Logger } from '../logger.js';
import { formatMiB } from '../size.js';
import { spaceNeeded } from './disk-full.js';

/** How long after a fold or compaction failed (a full disk) the next one is tried. */
export const HOUSEKEEPING_RETRY_MS = 30 * 1000;

/**
 * Folding the journal into a new snapshot is housekeeping: when the disk has no room for the snapshot,
 * deliveries go on into the journal (their own lines fit), the failure is said once, and the fold is
 * tried again every HOUSEKEEPING_RETRY_MS, not before every delivery; once one succeeds, that is said too.
 */
export class Housekeeping {
  #retryAt = -Infinity;
  #failing = false;

  constructor(
    private readonly path: string,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** Whether a fold may be tried now: none failed in the last HOUSEKEEPING_RETRY_MS. */
  get mayRun(): boolean {
    return this.now() >= this.#retryAt;
  }

  /** A fold or compaction failed; `journal`: where deliveries go meanwhile, and its size. */
  failed(error: Error, journal: { path: string; bytes: number }): void {
    this.#retryAt = this.now() + HOUSEKEEPING_RETRY_MS;
    if (this.#failing) return;
    this.#failing = true;
    this.logger.warn(
      `Could not rewrite the capture store ${this.path}: ${error.message}. Nothing is lost and deliveries go on: each is kept in ${journal.path} (${formatMiB(journal.bytes)} now), which grows until there is room (rewriting it needs ${spaceNeeded(journal.bytes)} free); trying again every ${HOUSEKEEPING_RETRY_MS / 1000} s.`,
    );
  }

  succeeded(): void {
    this.#retryAt = -Infinity;
    if (!this.#failing) return;
    this.#failing = false;
    this.logger.info(`The capture store ${this.path} is rewritten again: its journal is folded in.`);
  }
}
