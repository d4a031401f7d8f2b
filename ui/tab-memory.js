// What the page keeps across a reload (or the browser bringing the tab back), so that none of what was
// typed is lost: the selected capture is in the address's fragment (#cap_…), so a reload opens it again,
// as does the address copied into another tab; the Edit & replay drafts, and which capture's editor is
// open, are in sessionStorage: this tab only, and gone when it closes, since a draft is a payload, which
// may hold personal data.

/** The tab's sessionStorage, or null where the browser refuses it to the page (site data blocked). */
const tabStorage = (() => {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
})();
const DRAFT = 'clockhook.draft.';
const EDITING = 'clockhook.editing';
const CAPTURE_ID = /^cap_[0-9a-z]+$/;

/** The capture the page's address names, or null. */
export function capturePlace() {
  const id = location.hash.slice(1); // a capture id needs no decoding; anything else is not one
  return CAPTURE_ID.test(id) ? id : null;
}

/** Puts the selected capture (or none) in the address, without a history entry per capture. */
export function showPlace(id) {
  if (capturePlace() === id) return;
  history.replaceState(history.state, '', `${location.pathname}${location.search}${id ? `#${id}` : ''}`);
}

/** The capture whose editor was open when the page was left, or null. */
export const editingBefore = () => tabStorage?.getItem(EDITING) ?? null;

export function rememberEditing(captureId) {
  if (captureId) tabStorage?.setItem(EDITING, captureId);
  else tabStorage?.removeItem(EDITING);
}

/**
 * captureId → the body as edited in Edit & replay, until Close: it stays through sending (to send it again
 * once the handler is fixed), through every new render, while another capture is shown, and through a
 * reload. Kept in memory at once, and in the tab's storage once typing pauses (a body can be megabytes)
 * and when the page is left. `unkeptChanged(captureId)` is told when the tab would not keep one.
 */
export class Drafts {
  #texts = new Map();
  /** The ids of the drafts the browser would not keep for the tab (too large, or storage refused). */
  #unkept = new Set();
  #timer = 0;
  #unkeptChanged;

  constructor(unkeptChanged) {
    this.#unkeptChanged = unkeptChanged;
  }

  get(captureId) {
    return this.#texts.get(captureId) ?? tabStorage?.getItem(DRAFT + captureId) ?? undefined;
  }

  keep(captureId, text) {
    this.#texts.set(captureId, text);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.store(), 300);
  }

  drop(captureId) {
    this.#texts.delete(captureId);
    this.#unkept.delete(captureId);
    tabStorage?.removeItem(DRAFT + captureId);
  }

  /** Whether a reload would lose this draft. */
  isUnkept(captureId) {
    return this.#unkept.has(captureId);
  }

  /** Writes the drafts changed since to the tab's storage. */
  store() {
    clearTimeout(this.#timer);
    for (const [captureId, text] of this.#texts) {
      if (tabStorage?.getItem(DRAFT + captureId) === text) continue;
      try {
        if (!tabStorage) throw new Error('no storage for the page');
        tabStorage.setItem(DRAFT + captureId, text);
        this.#unkept.delete(captureId);
      } catch {
        // Over the tab's storage (about 5 MB in Chromium and Firefox), or none: the page keeps the draft
        // until a reload and says so; an older stored version must not come back instead.
        tabStorage?.removeItem(DRAFT + captureId);
        if (!this.#unkept.has(captureId)) {
          this.#unkept.add(captureId);
          this.#unkeptChanged(captureId);
        }
      }
    }
  }
}
