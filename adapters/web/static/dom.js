// Tiny DOM helpers. Text always goes in as text nodes, never as HTML, so
// titles, commands and reasons from the host cannot inject markup.

/** el builds an element; attrs are set as attributes, children appended. */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** clear removes every child of node. */
export function clear(node) {
  node.replaceChildren();
}
