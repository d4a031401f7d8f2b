import type { Capture } from './capture.js';

/** At most this many captures' texts are kept: those not answered yet, the newest first. */
const KEPT = 256;

/**
 * The text of each capture not answered yet (JSON.stringify's, made once for the journal), from which its answered
 * state's text is made without a second serialization. Each goes once its capture is answered: the page is handed
 * the texts as the captures change (see HeldCaptures.emit), so that the store keeps none of them for it. Captures
 * never answered (refused, or captured with no app) leave theirs until they are the oldest of KEPT.
 */
export class CaptureTexts {
  readonly #texts = new Map<Capture, string>();

  keep(capture: Capture, json: string): void {
    this.#texts.set(capture, json);
    // A Map keeps its keys in the order they were set: the first is the oldest.
    if (this.#texts.size > KEPT) this.#texts.delete(this.#texts.keys().next().value as Capture);
  }

  /**
   * The text of a changed capture (the text of the capture as it was is let go), made without a second
   * serialization when the patch only adds fields (a forward result): the changed capture (CaptureStore.update's
   * `Object.assign({}, current, patch)`) keeps the current fields in order and puts the new ones after them, so its
   * JSON is the current one with the patch's fields appended, the very text JSON.stringify would make. Undefined
   * when it cannot be made so.
   */
  changed(current: Capture, patch: Partial<Capture>, patchJson: string): string | undefined {
    const base = this.#texts.get(current);
    this.#texts.delete(current);
    if (base === undefined || patchJson === '{}' || Object.keys(patch).some((key) => key in current)) return undefined;
    return `${base.slice(0, -1)},${patchJson.slice(1)}`;
  }
}
