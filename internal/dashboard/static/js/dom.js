// Small DOM helpers: build elements without innerHTML, so nothing the API
// returns is ever parsed as markup.

// h creates an element: h('a', {href: '#/x', class: 'btn'}, 'text', child).
// Attributes starting with "on" become event listeners.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// replace empties el and fills it with children.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// table builds a table from column headings and rows of cells.
export function table(headings, rows, empty = 'Nothing here yet.') {
  if (!rows.length) return h('p', {class: 'muted empty'}, empty);
  return h('table', {},
    h('thead', {}, h('tr', {}, headings.map((t) => h('th', {}, t)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c))))));
}

// when formats an RFC 3339 time (or unix ms) for people, in their zone.
export function when(t) {
  if (!t) return '—';
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}

// bytes formats a byte count.
export function bytes(n) {
  if (n == null) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

// errorBox shows an error in place of a panel's content.
export function errorBox(err) {
  return h('div', {class: 'error', role: 'alert'}, err && err.message ? err.message : String(err));
}

// section is a titled panel.
export function section(title, ...children) {
  return h('section', {class: 'panel'}, h('h2', {}, title), ...children);
}
