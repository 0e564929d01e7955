// A gate report as stored: its summary, the verdict of each metric, the
// rounds of an A/B's cases, and the report's JSON itself (v1::GateReport in
// the API's JSON, as `perfgate gate --json` writes it).
import { get } from './api.js';
import { h, link, num, pct, table } from './dom.js';

const verdictClass = (v) => (/FAIL|REGRESS|WORSE/.test(v) ? 'fail' : /PASS|BETTER|IMPROV/.test(v) ? 'pass' : 'inconclusive');

export async function renderReport(root, params, id) {
  const r = await get(`reports/${encodeURIComponent(id)}`);
  const verdicts = (r.verdicts || []).map((v) => h('tr', {},
    h('td', {}, v.benchmark), h('td', {}, v.metric),
    h('td', { class: 'num' }, num(v.baseline_median)), h('td', { class: 'num' }, num(v.candidate_median)),
    h('td', { class: 'num' }, pct(v.change)), h('td', { class: 'num' }, pct(v.tolerance)),
    h('td', { class: verdictClass(v.verdict || '') }, (v.verdict || '').replace(/^VERDICT_/, '').toLowerCase()),
    h('td', {}, v.note || '')));
  root.append(h('h1', {}, `Gate report ${id}`),
    h('p', { 'data-testid': 'report-summary' }, r.summary || ''),
    h('p', {}, 'Candidate ', h('a', { href: link(`run/${r.candidate_run_id}`), 'data-testid': 'report-candidate' },
      h('code', {}, r.candidate_run_id || '')),
      ` (${r.candidate_branch || ''} @ ${r.candidate_commit || ''}) on ${r.sku || ''} against ${r.baseline_branch || ''}`),
    table(['benchmark', 'metric', 'baseline', 'candidate', 'change', 'tolerance', 'verdict', 'note'], verdicts,
      { 'data-testid': 'verdicts' }),
    ...((r.case_rounds || []).length === 0 ? [] : [table(['case', 'rounds', 'stopped'],
      r.case_rounds.map((c) => h('tr', {}, h('td', {}, c.benchmark), h('td', { class: 'num' }, String(c.rounds)),
        h('td', {}, (c.stopped || '').replace(/^AB_STOP_/, '').toLowerCase()))), { 'data-testid': 'case-rounds' })]),
    h('details', {}, h('summary', {}, 'JSON'), h('pre', { class: 'mono' }, JSON.stringify(r, null, 2))));
}
