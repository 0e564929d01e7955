// The dashboard: hash routing (#/<view>?<params>), one render function per
// view, every view's state in its URL so that it can be pasted.
import { h } from './dom.js';
import { renderRuns, renderRun } from './runs.js';
import { renderSeries } from './series.js';
import { renderCompare } from './compare.js';
import { renderFleet } from './fleet.js';
import { renderReport } from './report.js';
import { renderRegressions } from './regressions.js';

const views = {
  runs: renderRuns, run: renderRun, series: renderSeries, compare: renderCompare,
  fleet: renderFleet, report: renderReport, regressions: renderRegressions,
};

// Changes the URL (and so the view) to view with params.
export function navigate(view, params) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== ''));
  location.hash = `#/${view}${q.toString() ? '?' + q : ''}`;
}

async function route() {
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  const [name, ...rest] = path.split('/');
  const render = views[name] || renderRuns;
  const root = document.getElementById('view');
  const target = h('div', { 'data-view': name || 'runs' });
  document.body.dataset.ready = 'loading';
  try {
    await render(target, new URLSearchParams(query || ''), rest.join('/'));
  } catch (e) {
    target.replaceChildren(h('p', { class: 'error', 'data-testid': 'error' }, String(e.message || e)));
  }
  root.replaceChildren(target);
  // Milliseconds from the start of navigation to the view drawn (kept for
  // the load measurement of docs/dashboard.md).
  if (!document.body.dataset.loadMs) document.body.dataset.loadMs = Math.round(performance.now());
  document.body.dataset.ready = 'yes';
}

window.addEventListener('hashchange', route);
route();
