import type { ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import type { Capture } from '../store/index.js';
import type { DirectRequest } from './direct.js';
import { replayRequest } from './replay.js';
import { type FaultPlan, faultsText, faultWords, type FaultSpec, planOf, seededRandom } from './faults.js';
import { SERVICE_LIMIT_SECONDS } from './app-wait.js';

/** The faults of a listen (`--faults`, `--faults-seed`): see FaultSpec and docs/faults.md. */
export interface FaultsOption {
  spec: FaultSpec;
  seed: number;
}

/**
 * Applies the injected faults to the deliveries (not to replays, nor to the duplicates it sends itself):
 * decides each one's plan as it arrives, holds it (delay, reorder) before it is forwarded, and counts what it
 * did for the summary at exit.
 */
export class Injector {
  readonly seed: number;
  readonly #spec: FaultSpec;
  readonly #random: () => number;
  readonly #counts = new Map<string, number>();
  /** The deliveries held together by `reorder`, and when their window closes. */
  #batch: ((done: () => void) => void)[] | null = null;

  readonly #logger: Logger;

  constructor({ spec, seed }: FaultsOption, logger: Logger) {
    this.#logger = logger;
    this.seed = seed;
    this.#spec = spec;
    this.#random = seededRandom(seed);
  }

  /** The faults as given (in the user's words), and the seed that repeats them. */
  describe(): { spec: string; seed: number } {
    return { spec: faultsText(this.#spec), seed: this.seed };
  }

  /**
   * Faults on purpose, decided as a capture arrives, for a delivery that would go on (not a replay, nor one
   * refused): recorded with it (`injected`), and a `fail` refuses it with its status.
   */
  decide(capture: Capture): { capture: Capture; plan: FaultPlan | null } {
    if (capture.source !== 'delivery' || capture.rejected) return { capture, plan: null };
    const faults = this.#plan(capture.envelope?.type ?? null);
    if (!faults) return { capture, plan: null };
    const { fail } = faults.plan;
    const rejected = fail ? { rejected: { statusCode: fail, code: 'injected_fail' } } : {};
    return { capture: Object.assign({}, capture, { injected: faults.injected }, rejected), plan: faults.plan };
  }

  /** The plan of a delivery of this type, as it arrives (in order: see planOf), and its words for the capture. */
  #plan(type: string | null): { plan: FaultPlan; injected: string[] } | null {
    const plan = planOf(this.#spec, this.#random, type);
    if (!plan) return null;
    const injected = faultWords(plan);
    // The duplicate is counted once sent (see Listener).
    for (const word of injected) if (word !== 'duplicated') this.count(word.split(' ')[0]);
    return { plan, injected };
  }

  /** An injected duplicate: the same bytes again, with a fresh signature, as a delivery of its own (no faults of its own). */
  async duplicate(
    original: Capture,
    bytes: Buffer,
    { secret, now }: { secret: string | null; now: number },
    deliver: (request: DirectRequest) => Promise<unknown>,
  ): Promise<void> {
    const request = replayRequest(original, bytes, { mode: secret ? 'resign' : 'asis', secret, now });
    this.count('duplicate');
    await deliver(request).catch((error: Error) =>
      this.#logger.warn(`Could not send the injected duplicate of ${original.id}: ${error.message}`),
    );
  }

  count(fault: string): void {
    this.#counts.set(fault, (this.#counts.get(fault) ?? 0) + 1);
  }

  /**
   * Holds a delivery before it is forwarded (its delay, then its turn in a reordered batch); resolves with
   * the function to call once its forward is done (the next of a reordered batch goes only then).
   */
  async before(plan: FaultPlan): Promise<() => void> {
    if (plan.delayMs) await new Promise((resolve) => setTimeout(resolve, plan.delayMs));
    if (!plan.reorder || !this.#spec.reorder) return () => {};
    const window = this.#spec.reorder;
    return new Promise((resolve) => {
      if (!this.#batch) {
        this.#batch = [];
        setTimeout(() => void this.#release(), window);
      }
      this.#batch.push((done) => resolve(done));
    });
  }

  /** Lets a reordered batch go, one at a time, in an order other than the one it came in (when it has two or more). */
  async #release(): Promise<void> {
    const batch = this.#batch ?? [];
    this.#batch = null;
    const order = batch.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(this.#random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    if (order.every((n, i) => n === i)) order.reverse();
    for (const i of order) await new Promise<void>((done) => batch[i](done));
  }

  /**
   * An injected timeout: the sender is answered only once it has given up (its connection closes at its time
   * limit), or after the service's limit, and then not at all: it counts a failure, and retries a delivery the
   * app took.
   */
  async holdAnswer(res: ServerResponse): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, (SERVICE_LIMIT_SECONDS + 1) * 1000);
      res.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    res.destroy();
  }

  /** What was injected, for the line at exit; null when nothing was. */
  summary(): string | null {
    if (this.#counts.size === 0) return null;
    const counts = [...this.#counts].map(([fault, n]) => `${n} ${fault}`).join(', ');
    return `Faults injected: ${counts} (--faults-seed ${this.seed} repeats them).`;
  }
}
