// DOM helpers. Every piece of payload text goes in through textContent, never as HTML:
// a delivery body is attacker-controlled.

/** Creates an element: el('td', { class: 'x' }, 'text', child). Attribute values are set as attributes, never parsed. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
}

const MAX_INLINE = 2000;

function scalar(value) {
  if (value === null) return el('span', { class: 'j-null' }, 'null');
  switch (typeof value) {
    case 'string': {
      const shown = value.length > MAX_INLINE ? `${value.slice(0, MAX_INLINE)}… (${value.length} characters)` : value;
      return el('span', { class: 'j-str' }, JSON.stringify(shown));
    }
    case 'number':
      return el('span', { class: 'j-num' }, String(value));
    case 'boolean':
      return el('span', { class: 'j-bool' }, String(value));
    default:
      return el('span', {}, String(value));
  }
}

/**
 * A collapsible, coloured JSON tree. Children are built only when a node is opened, so a
 * 10,000-level document costs nothing until someone clicks down into it.
 */
export function jsonTree(value, key = null, depth = 0) {
  const label = key === null ? [] : [el('span', { class: 'j-key' }, JSON.stringify(key)), ': '];
  if (value === null || typeof value !== 'object') return el('div', { class: 'row' }, ...label, scalar(value));
  const isArray = Array.isArray(value);
  const keys = Object.keys(value);
  const count = keys.length === 1 ? (isArray ? '1 item' : '1 key') : `${keys.length} ${isArray ? 'items' : 'keys'}`;
  const summary = el('summary', {}, ...label, isArray ? `[ ${count} ]` : `{ ${count} }`);
  const details = el('details', {}, summary);
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    for (const k of keys) details.append(jsonTree(value[k], isArray ? Number(k) : k, depth + 1));
  };
  details.addEventListener('toggle', () => details.open && build());
  if (depth < 2) {
    details.open = true;
    build();
  }
  return details;
}

/** Hands `text` to the browser as a download named `name`. */
/**
 * Asks listen (`act`) for a scenario of `request` (its captures, or an event) and saves it as
 * `<name>.scenario.json`, as `captures export --format scenario` writes it; resolves with the action's result.
 */
export async function saveScenario(act, request, name) {
  const result = await act({ type: 'scenario', ...request });
  if (result.ok) download(`${name}.scenario.json`, JSON.stringify(result.data, null, 2), 'application/json');
  return result;
}

export function download(name, text, type) {
  const blob = new Blob([text], { type });
  const link = el('a', { href: URL.createObjectURL(blob), download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}
