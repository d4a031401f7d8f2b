import { maskSecret, DEFAULT_TOLERANCE_SECONDS } from '../contract/index.js';
import type { Logger } from '../logger.js';
import { isSignatureRefusal } from '../contract/index.js';
import type { CaptureForward, CaptureSignature } from '../store/index.js';

/** Redirect targets explained at most, so that a hostile app cannot grow the set without end. */
const MAX_REDIRECTS_EXPLAINED = 100;

/**
 * The advice the listener gives once, where a delivery's line alone would mislead: an app that redirects,
 * an app that refuses a validly signed delivery, a POST outside --path, the byte budget full. It watches
 * what the listener reports and says each thing once (a run, a place, or until the budget empties).
 */
export class Advisor {
  readonly #logger: Logger;
  readonly #basePath: string;
  readonly #redirectsExplained = new Set<string>();
  #secret: string | null = null;
  /** The command that prints the secret when it is the registered endpoint's; null when it was given. */
  #secretPrintedBy: string | null = null;
  #secretAdvised = false;
  #outsidePathAdvised = false;
  #busyAdvised = false;

  readonly #tolerance: number;
  #ageAdvised = false;

  constructor(logger: Logger, basePath: string, tolerance = DEFAULT_TOLERANCE_SECONDS) {
    this.#logger = logger;
    this.#basePath = basePath;
    this.#tolerance = tolerance;
  }

  setSecret(secret: string | null, printedBy: string | null): void {
    this.#secret = secret;
    this.#secretPrintedBy = printedBy;
  }

  /** The app answered a forwarded delivery; `relative` is its path under --path. */
  forwarded(forward: CaptureForward, status: number, signature: CaptureSignature, relative: string): void {
    if (status >= 300 && status < 400) this.#redirect(forward, relative);
    if (signature.status !== 'valid' || !isSignatureRefusal(status)) return;
    // Near the window's edge, the app may have found it too old a moment later (or by a clock of its own).
    const age = Math.abs(signature.ageSeconds ?? 0);
    if (this.#tolerance > 0 && age + 5 + forward.durationMs / 1000 > this.#tolerance) this.#refusedOld(status, age);
    else this.#refusedValid(status);
  }

  #refusedOld(status: number, age: number): void {
    if (this.#ageAdvised) return;
    this.#ageAdvised = true;
    this.#logger.warn(
      `The app answered ${status} to a delivery whose signature is valid, ${age} s from its timestamp: within listen's ${this.#tolerance} s window, but close enough to its edge that the app may have refused it as too old (by its own clock, or once it got to it).`,
    );
  }

  /**
   * A request outside --path is answered 404 and not captured, so a service that delivers to the wrong
   * path would meet silence at the terminal: the first POST there is explained, once a run (anything on
   * the internet may POST anywhere, so not each path).
   */
  outsidePath(path: string): void {
    if (this.#outsidePathAdvised) return;
    this.#outsidePathAdvised = true;
    const base = this.#basePath;
    this.#logger.warn(
      `A POST to ${path} was answered 404 and not captured: listen takes deliveries under ${base} only (--path). If the service sends them there, register its endpoint with the path ${base}, or give listen the --path of that URL. Further requests outside ${base} are not reported.`,
    );
  }

  /** The bodies held fill the budget (`budget`, shown): said once until `budgetEmpty`. */
  busy(budget: string): void {
    if (this.#busyAdvised) return;
    this.#busyAdvised = true;
    this.#logger.warn(
      `Bodies of requests in flight fill the listener's budget (--max-buffer, ${budget}): further deliveries are answered 503 until some are answered; the service retries them. Raise --max-buffer if this machine has the memory.`,
    );
  }

  budgetEmpty(): void {
    this.#busyAdvised = false;
  }

  /**
   * The app refusing as unauthorized (400, 401, 403) a delivery whose signature clockhook verified is most
   * often an app verifying with another secret: said once a run, with the end of the right one to compare.
   */
  #refusedValid(status: number): void {
    if (this.#secretAdvised || this.#secret === null) return;
    this.#secretAdvised = true;
    const where = this.#secretPrintedBy
      ? `"${this.#secretPrintedBy}" prints it whole`
      : 'the one given to listen with --secret or $CLOCKHOOK_SECRET';
    this.#logger.warn(
      `The app answered ${status} to a delivery whose signature is valid. If it checks signatures, it may verify with another secret than clockhook, which used ${maskSecret(this.#secret)} (${where}).`,
    );
  }

  /**
   * An app that redirects a delivery (a framework adding a trailing slash, http → https) fails every one:
   * the service does not follow redirects and counts a non-2xx answer as failed, so the endpoint ends up
   * disabled. Said with what to change, once per place it redirects to.
   */
  #redirect(forward: CaptureForward, relative: string): void {
    const location = forward.headers.location;
    if (typeof location !== 'string' || !URL.canParse(location, forward.target)) return;
    if (this.#redirectsExplained.size >= MAX_REDIRECTS_EXPLAINED) return;
    const to = new URL(location, forward.target);
    if (this.#redirectsExplained.has(to.href)) return;
    this.#redirectsExplained.add(to.href);
    const fix =
      relative === '/' && to.search === '' && to.hash === ''
        ? `Forward to where it leads instead: --forward-to ${to.href}`
        : `Make the app answer ${forward.target} itself.`;
    this.#logger.warn(
      `The app answered ${forward.statusCode} to POST ${forward.target}, redirecting to ${to.href}. The service does not follow redirects: it counts each such delivery as failed and retries it. ${fix}`,
    );
  }
}
