// The splitter between the list and the detail: dragged with the mouse (or a finger), moved with the arrow
// keys (Home and End for the ends), and remembered for the next visit, as editors' side panels are.

const KEY = 'clockhook.listWidth';
const STEP = 24;
const MIN = 360;
/** Room the detail keeps at least. */
const DETAIL_MIN = 280;

function bounds(layout) {
  return { min: MIN, max: Math.max(MIN, layout.clientWidth - DETAIL_MIN - 6) };
}

function apply(layout, splitter, width, { keep }) {
  const { min, max } = bounds(layout);
  const px = Math.round(Math.min(max, Math.max(min, width)));
  layout.style.setProperty('--list-width', `${px}px`);
  splitter.setAttribute('aria-valuemin', String(min));
  splitter.setAttribute('aria-valuemax', String(max));
  splitter.setAttribute('aria-valuenow', String(px));
  if (!keep) return;
  try {
    localStorage.setItem(KEY, String(px));
  } catch {
    // site data blocked: the width lasts this visit
  }
}

/** Sets the splitter up: the width remembered (else the stylesheet's), and its mouse and keys. */
export function initSplitter(layout, splitter) {
  const stored = (() => {
    try {
      return Number(localStorage.getItem(KEY)) || null;
    } catch {
      return null;
    }
  })();
  const current = () => splitter.getBoundingClientRect().left - layout.getBoundingClientRect().left;
  apply(layout, splitter, stored ?? current(), { keep: false });
  splitter.addEventListener('pointerdown', (event) => {
    event.preventDefault();
    splitter.setPointerCapture(event.pointerId);
    splitter.classList.add('dragging');
    // Where in the splitter it was grabbed: the list's edge follows the pointer from there.
    const left = layout.getBoundingClientRect().left + (event.clientX - splitter.getBoundingClientRect().left);
    const move = (e) => apply(layout, splitter, e.clientX - left, { keep: false });
    const done = (e) => {
      apply(layout, splitter, e.clientX - left, { keep: true });
      splitter.classList.remove('dragging');
      splitter.removeEventListener('pointermove', move);
      splitter.removeEventListener('pointerup', done);
    };
    splitter.addEventListener('pointermove', move);
    splitter.addEventListener('pointerup', done);
  });
  splitter.addEventListener('keydown', (event) => {
    const { min, max } = bounds(layout);
    const now = current();
    const to = { ArrowLeft: now - STEP, ArrowRight: now + STEP, Home: min, End: max }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    event.stopPropagation();
    apply(layout, splitter, to, { keep: true });
  });
}
