// Small helpers to build the views' DOM without a framework.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const short = (commit) => (commit || '').slice(0, 10);
export const when = (secs) => (secs ? new Date(secs * 1000).toISOString().replace('T', ' ').slice(0, 19) : '');
// A message's time (RFC 3339 text in protobuf's JSON mapping) as `when` writes seconds.
export const stamp = (text) => (text ? text.replace('T', ' ').slice(0, 19) : '');
// A message enum's name without its prefix, in lower case: 'PROBE_VERDICT_CLEAN' -> 'clean'.
export const word = (name, prefix) => (name || '').replace(prefix, '').toLowerCase();
// A message's double as a number to draw or compute with; null where it is
// not one (protobuf's JSON mapping writes a double that is not a number as "NaN").
export const measured = (x) => (typeof x === 'number' && isFinite(x) ? x : null);
export function pct(x) {
  if (x === null || x === undefined || !isFinite(x)) return '';
  return `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
}
export function num(x) {
  if (x === null || x === undefined || !isFinite(x)) return '';
  return Math.abs(x) >= 100 ? x.toFixed(1) : Math.abs(x) >= 1 ? x.toFixed(3) : x.toPrecision(4);
}
// A hash link to a view with its parameters.
export function link(view, params = {}) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== ''));
  return `#/${view}${q.toString() ? '?' + q : ''}`;
}
export function table(head, rows, attrs = {}) {
  return h('table', attrs, h('thead', {}, h('tr', {}, head.map((c) => h('th', {}, c)))), h('tbody', {}, rows));
}
export function select(name, options, value, onchange, label) {
  const s = h('select', { name, onchange: (e) => onchange(e.target.value) },
    options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
  return h('label', {}, label || name, s);
}
