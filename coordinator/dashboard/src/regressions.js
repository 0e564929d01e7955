// Regressions found on tracked branches and their triage. A change of state
// is sent with the tab's credential (the token box), which needs role gate
// or admin when the coordinator checks credentials. One regression's view
// also shows its bisections (bisections.js). The API answers and reads the
// messages of proto/perfgate/v1/regression.proto in protobuf's JSON mapping:
// states by their enum names (REGRESSION_STATE_FIXED), times as RFC 3339
// text, a value not measured absent.
import { get, post } from './api.js';
import { bisectionsOf } from './bisections.js';
import { h, link, num, pct, select, short, stamp, table, word } from './dom.js';
import { navigate } from './nav.js';

const STATES = ['new', 'acknowledged', 'investigating', 'fixed', 'accepted', 'invalid'];
const PREFIX = 'REGRESSION_STATE_';
// A state's short name, as the page and the `state` parameter write it.
export const stateOf = (r) => word(r.state, PREFIX);

function triageForm(r, onDone) {
  const status = h('span', { class: 'muted', 'data-testid': 'triage-status' });
  const form = h('form', { class: 'triage', 'data-testid': 'triage', onsubmit: async (e) => {
    e.preventDefault();
    const f = e.target;
    localStorage.setItem('perfgate.by', f.by.value);
    try {
      await post(`regressions/${r.id}/triage`, { state: PREFIX + f.state.value.toUpperCase(), note: f.note.value, by: f.by.value,
        ...(f.state.value === 'fixed' ? { commit: f.commit.value } : {}) });
      onDone();
    } catch (err) { status.textContent = err.message; status.className = 'error'; }
  } },
  h('select', { name: 'state' }, STATES.filter((s) => s !== 'new' && s !== stateOf(r)).map((s) => h('option', { value: s }, s))),
  h('input', { name: 'note', placeholder: 'note (why)', required: true }),
  h('input', { name: 'commit', placeholder: 'fixing commit', size: 12 }),
  h('input', { name: 'by', placeholder: 'your name', size: 10, value: localStorage.getItem('perfgate.by') || '' }),
  h('button', { type: 'submit' }, 'Change'), status);
  return form;
}

export async function renderRegressions(root, params) {
  const state = params.get('state') || '', id = params.get('id') || '';
  const reload = () => route();
  const route = async () => { root.replaceChildren(); await renderRegressions(root, params); };
  root.append(h('h1', {}, 'Regressions'), h('div', { class: 'filters' },
    select('state', [['', 'all'], ...STATES.map((s) => [s, s])], state, (v) => navigate('regressions', { state: v }))));
  const list = id ? [await get(`regressions/${encodeURIComponent(id)}`)] : (await get('regressions', { state, limit: 200 })).regressions;
  const rows = list.flatMap((r) => {
    const state = stateOf(r);
    const series = link('series', { benchmark: r.benchmark, metric: r.metric, sku: r.sku, branch: r.branch });
    const main = h('tr', { 'data-id': r.id },
      h('td', {}, h('a', { href: link('regressions', { id: r.id }) }, `#${r.id}`)),
      h('td', {}, h('a', { href: series }, `${r.benchmark} · ${r.metric}`)), h('td', {}, `${r.sku} / ${r.branch}`),
      h('td', { class: 'mono' }, `${short(r.good_commit)} → ${short(r.bad_commit)}`),
      h('td', { class: 'num worse' }, pct(r.change)), h('td', { class: 'num' }, `${num(r.median_before)} → ${num(r.median_after)} ${r.unit}`),
      h('td', {}, h('span', { class: `state ${state}` }, state), r.fixed_by_commit ? ` by ${short(r.fixed_by_commit)}` : ''),
      h('td', {}, stamp(r.detected_at)));
    const events = (r.events || []).map((e) => h('li', {}, `${stamp(e.at)} ${e.by}: ${word(e.from, PREFIX).replace('unspecified', '') || '∅'} → ${word(e.to, PREFIX)}${e.commit ? ` (${short(e.commit)})` : ''} — ${e.note}`));
    // History and the triage form in a row of their own below the regression.
    const detail = h('tr', { 'data-testid': 'regression', 'data-id': r.id, 'data-state': state, class: 'detail' },
      h('td', {}), h('td', { colspan: 7 }, h('ul', { class: 'muted events' }, events), triageForm(r, reload)));
    return [main, detail];
  });
  root.append(list.length ? table(['id', 'series', 'SKU / branch', 'commits (good → bad)', 'change', 'level', 'state', 'detected'], rows, { 'data-testid': 'regressions' })
    : h('p', { class: 'muted' }, 'No regression found.'));
  // One regression: its bisections with their steps below it.
  if (id && list.length) root.append(await bisectionsOf(id));
}
