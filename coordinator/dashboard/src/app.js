// The dashboard: hash routing (#/<view>?<params>), one render function per
// view, every view's state in its URL so that it can be pasted; the token
// box in the header, asked once per tab when the coordinator needs a
// credential (docs/dashboard.md). Views move with navigate (nav.js), so no
// view imports this file.
import { AuthError, setToken, token } from './api.js';
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
    target.replaceChildren(e instanceof AuthError ? refused(e)
      : h('p', { class: 'error', 'data-testid': 'error' }, String(e.message || e)));
  }
  root.replaceChildren(target);
  // Milliseconds from the start of navigation to the view drawn (kept for
  // the load measurement of docs/dashboard.md).
  if (!document.body.dataset.loadMs) document.body.dataset.loadMs = Math.round(performance.now());
  document.body.dataset.ready = 'yes';
}

// What a refused credential looks like: 401 (none, unknown or revoked; the
// stored token is forgotten so that the box asks again) or 403 (a role that
// may not).
function refused(e) {
  if (e.status === 401) {
    setToken('');
    renderLogin();
  }
  const text = e.status === 401
    ? `This coordinator needs a credential (${e.message}). Enter a token of role read (gate to triage) above.`
    : `Your credential may not do this (${e.message}). Forget it and enter another above.`;
  return h('p', { class: 'error', 'data-testid': 'auth-error', 'data-status': e.status }, text);
}

// The token box, or the sign of a token kept and the button to forget it.
function renderLogin() {
  const box = document.getElementById('login');
  if (token()) {
    box.replaceChildren(h('span', { class: 'muted', 'data-testid': 'signed-in' }, 'token kept in this tab'),
      h('button', { type: 'button', onclick: () => { setToken(''); renderLogin(); route(); } }, 'Forget'));
  } else {
    box.replaceChildren(h('input', { name: 'token', type: 'password', placeholder: 'token', autocomplete: 'off',
      'aria-label': 'token' }), h('button', { type: 'submit' }, 'Use token'));
  }
}

document.getElementById('login').addEventListener('submit', (e) => {
  e.preventDefault();
  setToken(e.target.token.value.trim());
  renderLogin();
  route();
});
renderLogin();
window.addEventListener('hashchange', route);
route();
