// Runs by branch and SKU with their verdicts; one run with its cases (the
// messages ListRunsResponse and RunDetail of query.proto).
import { get } from './api.js';
import { h, link, num, select, short, stamp, table, word } from './dom.js';
import { navigate } from './nav.js';
import { servingPlots } from './serving.js';

const outcome = (report) => word(report.outcome, 'GATE_');
const status = (run) => word(run.status, 'RUN_');

function verdictCell(v) {
  if (!v) return h('td', { class: 'muted' }, '—');
  return h('td', { class: outcome(v) }, h('a', { href: link(`report/${v.report_id}`) }, outcome(v)));
}

// Reads served by a standby: how fresh they are.
const asOf = (view) => (view.data_as_of ? h('p', { class: 'muted', 'data-testid': 'as-of' },
  `data as of ${stamp(view.data_as_of)} UTC (read from a standby)`) : '');

export async function renderRuns(root, params) {
  const branch = params.get('branch') || '', sku = params.get('sku') || '';
  const [catalog, listed] = await Promise.all([get('catalog'), get('runs', { branch, sku, limit: 200 })]);
  const { runs } = listed;
  const go = (p) => navigate('runs', { branch, sku, ...p });
  const filters = h('div', { class: 'filters' },
    select('branch', [['', 'all'], ...catalog.branches.map((b) => [b, b])], branch, (v) => go({ branch: v })),
    select('sku', [['', 'all'], ...catalog.skus.map((s) => [s, s])], sku, (v) => go({ sku: v })));
  const rows = runs.map((r, i) => {
    const previous = runs.slice(i + 1).find((o) => o.branch === r.branch && o.sku === r.sku && status(o) === 'complete');
    return h('tr', { 'data-run': r.run_id },
      h('td', {}, stamp(r.started_at)),
      h('td', {}, r.branch),
      h('td', { class: 'mono' }, short(r.commit)),
      h('td', {}, r.sku),
      h('td', {}, r.node),
      h('td', { class: status(r) === 'failed' ? 'fail' : '' }, status(r)),
      h('td', { class: 'num' }, r.samples),
      verdictCell(r.latest_report),
      h('td', { class: 'warn' }, r.invalid_reasons.length ? `invalid: ${r.invalid_reasons.join('; ')}` : ''),
      h('td', {}, h('a', { href: link(`run/${r.run_id}`) }, 'cases'), ' ',
        previous ? h('a', { href: link('compare', { base: previous.run_id, cand: r.run_id }) }, 'vs previous') : ''));
  });
  root.append(h('h1', {}, 'Runs'), asOf(listed), filters,
    table(['started (UTC)', 'branch', 'commit', 'SKU', 'node', 'status', 'samples', 'verdict', '', ''], rows,
      { 'data-testid': 'runs' }));
}

export async function renderRun(root, params, id) {
  const detail = await get(`runs/${encodeURIComponent(id)}`);
  const { run } = detail;
  const series = (s) => link('series', { benchmark: s.benchmark, metric: s.metric, sku: run.sku, branch: run.branch });
  const rows = detail.summaries.map((s) => h('tr', {},
    h('td', {}, h('a', { href: series(s) }, s.benchmark)), h('td', {}, s.metric),
    h('td', { class: 'num' }, num(s.median)), h('td', { class: 'num' }, num(s.p5)), h('td', { class: 'num' }, num(s.p95)),
    h('td', {}, s.unit), h('td', { class: 'num' }, s.n), h('td', { class: 'num' }, s.n_throttled),
    h('td', { class: s.status === 'CASE_OK' ? '' : 'warn' }, word(s.status, 'CASE_'), s.reason ? `: ${s.reason}` : '')));
  const reports = detail.reports.map((v) => h('li', {}, h('a', { href: link(`report/${v.report_id}`) },
    `report ${v.report_id}: ${outcome(v)}`), ` against ${v.baseline_branch} at ${stamp(v.created_at)}`));
  const env = Object.entries(detail.environment.fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => h('tr', {}, h('td', {}, k), h('td', { class: 'mono' }, v)));
  const serving = servingPlots(detail.summaries);
  root.append(h('h1', {}, `Run ${run.run_id}`), asOf(detail),
    h('p', {}, `${run.branch} @ `, h('code', {}, run.commit), ` on ${run.sku}, node ${run.node}, ${status(run)}, finished ${stamp(run.finished_at)}`),
    run.invalid_reasons.length ? h('p', { class: 'warn' }, `Invalid for gating: ${run.invalid_reasons.join('; ')}`) : '',
    reports.length ? h('ul', {}, reports) : '',
    h('h2', {}, 'Cases'),
    table(['benchmark', 'metric', 'median', 'p5', 'p95', 'unit', 'n', 'throttled', 'status'], rows, { 'data-testid': 'cases' }),
    serving.length ? h('h2', {}, 'Latency against rate') : '', ...serving,
    h('h2', {}, 'Environment'), table(['field', 'value'], env));
}
