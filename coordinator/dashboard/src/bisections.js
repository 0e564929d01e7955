// The bisections of one regression (docs/bisect.md): each with its outcome
// and its steps, one row per probe: the commit, its attempt, the verdict and
// the change against the good endpoint with its interval. The API answers
// the messages of proto/perfgate/v1/bisection.proto in protobuf's JSON
// mapping: enums by their names, a value not measured absent, times as
// RFC 3339 text.
import { get } from './api.js';
import { h, pct, short, stamp, table, word } from './dom.js';

function steps(b) {
  const rows = (b.probes || []).map((p, i) => {
    const verdict = word(p.verdict, 'PROBE_VERDICT_');
    return h('tr', { 'data-verdict': verdict },
      h('td', { class: 'num' }, i + 1), h('td', { class: 'mono' }, short(p.commit)), h('td', { class: 'num' }, p.attempt),
      h('td', { class: `verdict ${verdict}` }, verdict),
      h('td', { class: 'num' }, p.change === undefined || !p.ci ? p.note : `${pct(p.change)} [${pct(p.ci.low)}, ${pct(p.ci.high)}]`),
      h('td', { class: 'num' }, pct(p.threshold)), h('td', { class: 'num' }, p.rounds), h('td', {}, stamp(p.at)));
  });
  return table(['step', 'commit', 'attempt', 'verdict', 'change [95 %]', 'carries from', 'rounds', 'at'], rows);
}

// The bisections of regression `id`, newest first, each with its steps.
export async function bisectionsOf(id) {
  const list = (await get('bisections', { regression: id })).bisections;
  if (!list.length) return h('p', { class: 'muted' }, 'Not bisected yet: perfgate bisect ', String(id));
  const full = await Promise.all(list.map((b) => get(`bisections/${b.id}`)));
  return h('div', { 'data-testid': 'bisections' }, full.map((b) => h('section', { 'data-state': word(b.state, 'BISECTION_STATE_') },
    h('h2', {}, `Bisection ${b.id}: ${word(b.state, 'BISECTION_STATE_')}${b.culprit ? ` ${short(b.culprit)} ${pct(b.change)}` : ''}`),
    h('p', { class: 'muted' }, `${short(b.good)} → ${short(b.bad)}, ${b.commits.length} commits; ${b.summary}`),
    steps(b))));
}
