// The bisections of one regression (docs/bisect.md): each with its outcome
// and its steps, one row per probe: the commit, its attempt, the verdict and
// the change against the good endpoint with its interval.
import { get } from './api.js';
import { h, pct, short, table, when } from './dom.js';

function steps(b) {
  const rows = (b.probes || []).map((p, i) => h('tr', { 'data-verdict': p.verdict },
    h('td', { class: 'num' }, i + 1), h('td', { class: 'mono' }, short(p.commit)), h('td', { class: 'num' }, p.attempt),
    h('td', { class: `verdict ${p.verdict}` }, p.verdict),
    h('td', { class: 'num' }, p.change === null ? p.note : `${pct(p.change)} [${pct(p.ci[0])}, ${pct(p.ci[1])}]`),
    h('td', { class: 'num' }, pct(p.threshold)), h('td', { class: 'num' }, p.rounds), h('td', {}, when(p.at))));
  return table(['step', 'commit', 'attempt', 'verdict', 'change [95 %]', 'carries from', 'rounds', 'at'], rows);
}

// The bisections of regression `id`, newest first, each with its steps.
export async function bisectionsOf(id) {
  const list = (await get('bisections', { regression: id })).bisections;
  if (!list.length) return h('p', { class: 'muted' }, 'Not bisected yet: perfgate bisect ', String(id));
  const full = await Promise.all(list.map((b) => get(`bisections/${b.id}`)));
  return h('div', { 'data-testid': 'bisections' }, full.map((b) => h('section', { 'data-state': b.state },
    h('h2', {}, `Bisection ${b.id}: ${b.state}${b.culprit ? ` ${short(b.culprit)} ${pct(b.change)}` : ''}`),
    h('p', { class: 'muted' }, `${short(b.good)} → ${short(b.bad)}, ${b.commits.length} commits; ${b.summary}`),
    steps(b))));
}
