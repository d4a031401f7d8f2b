// The Edit & replay editor: a draft kept for the tab, checked as JSON, its caret and scroll kept across renders.
import { replay } from './actions.js';
import { el } from './render.js';
import { drafts, setEditing } from './selection.js';
import { scheduleRender, state } from './state.js';

/** The body as JSON, or undefined when it is not JSON (or not UTF-8). */
export function parsedBody(capture) {
  if (capture.bodyEncoding === 'base64') return undefined;
  try {
    return JSON.parse(capture.body);
  } catch {
    return undefined;
  }
}

/** The open editor's elements, kept from one render to the next so that the text, the caret and the focus stay. */
let editorView = null;

export function editor(capture) {
  if (editorView?.captureId !== capture.id) editorView = newEditor(capture);
  if (state.focusEditor) {
    state.focusEditor = false;
    // After this render has put it on the page: typing goes into the body at once.
    const { area } = editorView;
    queueMicrotask(() => area.focus());
  }
  editorView.unkept.hidden = !drafts.isUnkept(capture.id);
  return editorView.node;
}

export function newEditor(capture) {
  const area = el('textarea', { 'aria-label': 'Body to replay', spellcheck: 'false' });
  const parsed = parsedBody(capture);
  area.value = drafts.get(capture.id) ?? (parsed === undefined ? capture.body : JSON.stringify(parsed, null, 2));
  const problem = el('div', { class: 'invalid', role: 'alert' });
  const send = el('button', { type: 'button' }, 'Send');
  const validate = () => {
    try {
      JSON.parse(area.value);
      problem.textContent = '';
      send.disabled = false;
      return true;
    } catch (error) {
      problem.textContent = `Invalid JSON: ${error.message}`;
      send.disabled = true;
      return false;
    }
  };
  area.addEventListener('input', () => {
    drafts.keep(capture.id, area.value);
    validate();
  });
  send.addEventListener('click', () => validate() && replay(capture, 'resign', area.value));
  const close = () => {
    drafts.drop(capture.id);
    setEditing(null);
    scheduleRender({ detail: true });
  };
  validate();
  const unkept = el(
    'p',
    { class: 'muted' },
    'The browser would not keep this text for the tab (too large, or site data blocked): a reload of the page would lose it.',
  );
  const node = el(
    'div',
    { class: 'editor' },
    el('h3', {}, 'Edit & replay (re-signed with the current time)'),
    area,
    problem,
    unkept,
    el('div', { class: 'actions' }, send, el('button', { type: 'button', onclick: close }, 'Close')),
  );
  return { captureId: capture.id, node, area, unkept };
}

/**
 * Where the open editor is scrolled to, and the caret of someone typing in it, taken before a render;
 * the function it returns puts them back (the editor itself outlives the render: see editorView).
 */
export function keepEditorPlace() {
  if (editorView && editorView.captureId !== state.editing) editorView = null;
  const area = editorView?.area;
  if (!area) return () => {};
  const scrollTop = area.scrollTop;
  const caret = document.activeElement === area ? [area.selectionStart, area.selectionEnd] : null;
  return () => {
    if (!area.isConnected) return;
    if (caret) {
      area.focus({ preventScroll: true });
      area.setSelectionRange(...caret);
    }
    area.scrollTop = scrollTop;
  };
}
