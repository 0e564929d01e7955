// A gate report as stored: its summary, the verdict of each metric, and the
// stored JSON itself.
import { get } from './api.js';
import { h, link, num, pct, table } from './dom.js';

const verdictClass = (v) => (/FAIL|REGRESS|WORSE/.test(v) ? 'fail' : /PASS|BETTER|IMPROV/.test(v) ? 'pass' : 'inconclusive');

export async function renderReport(root, params, id) {
  const r = await get(`reports/${encodeURIComponent(id)}`);
  const verdicts = (r.verdicts || []).map((v) => h('tr', {},
    h('td', {}, v.benchmark), h('td', {}, v.metric),
    h('td', { class: 'num' }, num(v.baselineMedian)), h('td', { class: 'num' }, num(v.candidateMedian)),
    h('td', { class: 'num' }, pct(v.change)), h('td', { class: 'num' }, pct(v.tolerance)),
    h('td', { class: verdictClass(v.verdict || '') }, (v.verdict || '').replace(/^VERDICT_/, '').toLowerCase()),
    h('td', {}, v.note || '')));
  root.append(h('h1', {}, `Gate report ${id}`),
    h('p', { 'data-testid': 'report-summary' }, r.summary || ''),
    h('p', {}, 'Candidate ', h('a', { href: link(`run/${r.candidateRunId}`) }, h('code', {}, r.candidateRunId || '')),
      ` (${r.candidateBranch || ''} @ ${r.candidateCommit || ''}) on ${r.sku || ''} against ${r.baselineBranch || ''}`),
    table(['benchmark', 'metric', 'baseline', 'candidate', 'change', 'tolerance', 'verdict', 'note'], verdicts,
      { 'data-testid': 'verdicts' }),
    h('details', {}, h('summary', {}, 'stored JSON'), h('pre', { class: 'mono' }, JSON.stringify(r, null, 2))));
}
