// Two runs side by side, one row per metric both have, largest change first
// (CompareResponse of query.proto).
import { get } from './api.js';
import { h, link, num, pct, short, table } from './dom.js';
import { navigate } from './nav.js';

// The change's interval as "[-1.2 %, +3.4 %]"; empty where the gate had none.
const interval = (r) => (r.change_ci_low !== undefined && r.change_ci_high !== undefined
  ? `[${pct(r.change_ci_low)}, ${pct(r.change_ci_high)}]` : '');

export async function renderCompare(root, params) {
  const base = params.get('base') || '', cand = params.get('cand') || '';
  const form = h('form', { class: 'filters', onsubmit: (e) => {
    e.preventDefault();
    navigate('compare', { base: e.target.base.value.trim(), cand: e.target.cand.value.trim() });
  } },
  h('label', {}, 'base run', h('input', { name: 'base', value: base, size: 38 })),
  h('label', {}, 'candidate run', h('input', { name: 'cand', value: cand, size: 38 })),
  h('button', { type: 'submit' }, 'Compare'));
  root.append(h('h1', {}, 'Compare two runs'), form);
  if (!base || !cand) { root.append(h('p', { class: 'muted' }, 'Give two run ids (the Runs view links each run to the one before it).')); return; }
  const c = await get('compare', { base, cand });
  const side = (r) => h('span', {}, h('a', { href: link(`run/${r.run_id}`) }, `${r.branch} @ ${short(r.commit)}`), ` (${r.sku}, ${r.node})`);
  const rows = c.rows.map((r) => h('tr', { 'data-testid': 'compare-row', 'data-benchmark': r.benchmark, 'data-metric': r.metric },
    h('td', {}, h('a', { href: link('series', { benchmark: r.benchmark, metric: r.metric, sku: c.cand.sku }) }, r.benchmark)),
    h('td', {}, r.metric), h('td', { class: 'num' }, num(r.base_median)), h('td', { class: 'num' }, num(r.cand_median)),
    h('td', {}, r.unit), h('td', { class: `num ${r.change > 0.03 ? 'worse' : r.change < -0.03 ? 'better' : ''}` }, pct(r.change)),
    h('td', { class: 'num muted' }, interval(r))));
  root.append(h('p', {}, 'base ', side(c.base), ' → candidate ', side(c.cand)),
    h('p', { class: 'legend-note' }, 'Change is the gate’s estimate for this pair (paired by round where both ran as rounds), signed so that > 0 is worse for the metric’s direction, with its 95 % interval; sorted by its size.'),
    table(['benchmark', 'metric', 'base median', 'candidate median', 'unit', 'change', '95 % interval'], rows, { 'data-testid': 'compare' }));
}
