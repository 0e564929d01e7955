// One sweep of a SKU across nodes: the outlier nodes, metric by metric, with
// the environment fields in which each differs from the fleet's majority
// (ListSweepsResponse of api.proto, FleetResponse of query.proto).
import { get } from './api.js';
import { h, link, num, stamp, table } from './dom.js';
import { navigate } from './nav.js';

export async function renderFleet(root, params) {
  const sku = params.get('sku') || '', sweep = params.get('sweep') || '', k = params.get('k') || '';
  const { sweeps } = await get('sweeps');
  root.append(h('h1', {}, 'Fleet'));
  const list = sweeps.map((s) => h('tr', {},
    h('td', {}, h('a', { href: link('fleet', { sku: s.sku, sweep: s.sweep }) }, s.sweep)), h('td', {}, s.sku),
    h('td', { class: 'num' }, s.nodes), h('td', { class: 'num' }, s.runs), h('td', {}, stamp(s.finished_at))));
  if (!sku || !sweep) {
    root.append(sweeps.length ? table(['sweep', 'SKU', 'nodes', 'runs', 'finished'], list, { 'data-testid': 'sweeps' })
      : h('p', { class: 'muted' }, 'No sweep with runs on three or more nodes yet.'));
    return;
  }
  const f = await get('fleet', { sku, sweep, k });
  const form = h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); navigate('fleet', { sku, sweep, k: e.target.k.value }); } },
    h('label', {}, 'k (MADs)', h('input', { name: 'k', value: k || f.k, size: 4 })), h('button', { type: 'submit' }, 'Apply'));
  const outliers = f.outliers.map((o) => h('tr', { 'data-testid': 'outlier', 'data-node': o.node, class: o.side },
    h('td', {}, h('a', { href: link(`run/${o.run_id}`) }, o.node)), h('td', {}, o.benchmark), h('td', {}, o.metric),
    h('td', { class: 'num' }, num(o.node_median)), h('td', { class: 'num' }, num(o.fleet_median)), h('td', {}, o.unit),
    h('td', { class: 'num' }, `${o.deviation.toFixed(1)} MAD`), h('td', {}, o.side),
    h('td', { 'data-testid': 'differing-fields' }, o.differing_fields.map((d) => `${d.name}: ${d.node_value || '∅'} (fleet ${d.majority_value || '∅'})`).join('; '))));
  const nodes = f.node_summary.map((n) => h('tr', {}, h('td', {}, n.node), h('td', { class: n.worse ? 'num worse' : 'num' }, n.worse), h('td', { class: 'num' }, n.better)));
  root.append(h('p', {}, `Sweep ${sweep} of ${sku}: ${f.nodes} nodes, threshold ${f.k} MADs of the fleet median.`), form,
    h('h2', {}, 'Outliers'),
    f.outliers.length ? table(['node', 'benchmark', 'metric', 'node median', 'fleet median', 'unit', 'deviation', 'side', 'differing environment'], outliers, { 'data-testid': 'outliers' })
      : h('p', { class: 'muted' }, 'No node beyond the threshold.'),
    h('h2', {}, 'Nodes'), table(['node', 'worse', 'better'], nodes));
}
