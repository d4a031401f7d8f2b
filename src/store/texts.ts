import type { Capture } from './capture.js';

/** How many of the newest captures' texts are kept: a page's next message's worth. */
const KEPT = 256;

/**
 * The newest captures serialized, once: the journal writes each, and the page's message, a few ms later,
 * carries the same text. Only the newest KEPT: keeping every held capture's text cost the listener ~12 MiB of
 * memory at the default retention (docs/performance.md).
 */
export class CaptureTexts {
  readonly #texts = new Map<Capture, string>();

  /** The capture's JSON.stringify, as the journal wrote it when it is among the newest; else made now. */
  of(capture: Capture): string {
    return this.#texts.get(capture) ?? JSON.stringify(capture);
  }

  keep(capture: Capture, json: string): void {
    this.#texts.set(capture, json);
    // A Map keeps its keys in the order they were set: the first is the oldest.
    if (this.#texts.size > KEPT) this.#texts.delete(this.#texts.keys().next().value as Capture);
  }

  /**
   * The text of a changed capture without a second serialization, when the patch only adds fields (a forward
   * result): `{...current, ...patch}` keeps the current fields in order and puts the new ones after them, so
   * its JSON is the current one with the patch's fields appended, the very text JSON.stringify would make.
   */
  changed(current: Capture, next: Capture, patch: Partial<Capture>, patchJson: string): void {
    const base = this.#texts.get(current);
    if (base === undefined || patchJson === '{}' || Object.keys(patch).some((key) => key in current)) return;
    this.keep(next, `${base.slice(0, -1)},${patchJson.slice(1)}`);
  }
}
