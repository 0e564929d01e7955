// Drives Debian's Chromium (headless, through playwright-core) through the
// dashboard of a seeded coordinator that requires credentials. Argument:
// the planted facts as JSON (dashboard_browser_test.cc). The page is
// refused until a token is entered in its box; each view is then checked
// against what was planted and saved as a screenshot in facts.screenshots;
// a triage is refused to a read credential and made with a gate one. A
// failed check exits 1 with the reason.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import path from 'node:path';

const facts = JSON.parse(process.argv[2]);
const browser = await chromium.launch({ executablePath: facts.chromium, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));

// Opens a view by its URL and waits until it has rendered; returns the
// milliseconds from navigation to rendered.
async function open(hash) {
  const start = Date.now();
  await page.goto(`${facts.url}/${hash}`);
  await page.waitForSelector('body[data-ready=yes]', { timeout: 15000 });
  const error = await page.$('[data-testid=error], [data-testid=auth-error]');
  assert.equal(error, null, `${hash}: ${error && (await error.textContent())}`);
  return Date.now() - start;
}
// Enters a token in the header's box; the view is drawn again with it.
async function signIn(token) {
  await page.fill('[data-testid=login] input[name=token]', token);
  await page.click('[data-testid=login] button[type=submit]');
  await page.waitForSelector('[data-testid=signed-in]');
}
const shot = (name) => page.screenshot({ path: path.join(facts.screenshots, `${name}.png`) });
const q = (params) => new URLSearchParams(params).toString();
const timings = {};

try {
  // Without a credential the page loads but its data is refused, and says so.
  await page.goto(`${facts.url}/#/runs`);
  await page.waitForSelector('[data-testid=auth-error][data-status="401"]', { timeout: 15000 });
  assert.match(await page.textContent('[data-testid=auth-error]'), /needs a credential \(missing .authorization: Bearer <token>. header/);
  await page.waitForSelector('[data-testid=login] input[name=token]');
  await shot('login');
  await signIn(facts.read_token);
  await page.waitForSelector('[data-testid=runs] tbody tr', { timeout: 15000 });

  // Series: 40 points, one change point at the planted commit, drawn inside the plot.
  timings.series = await open(`#/series?${q({ benchmark: facts.step_case, metric: 'time', sku: facts.sku, branch: 'main' })}`);
  await page.waitForSelector('[data-testid=plot] canvas');
  assert.equal(await page.getAttribute('[data-testid=plot]', 'data-points'), String(facts.main_runs));
  const plotted = await page.evaluate(() => window.perfgatePlot.data[1].filter((v) => v !== null).length);
  assert.equal(plotted, facts.main_runs, 'medians drawn');
  const changes = await page.$$eval('[data-testid=change-point]', (rows) => rows.map((r) => r.dataset.commit));
  assert.deepEqual(changes, [facts.step_commit], 'change points');
  // The marker is drawn at the x of the planted commit, inside the plot area.
  const mark = await page.evaluate((commit) => {
    const u = window.perfgatePlot, s = window.perfgateSeries;
    const index = s.points.findIndex((p) => p.commit === commit);
    return { index, change: s.changes[0].index, x: u.valToPos(u.data[0][index], 'x'), width: u.bbox.width / devicePixelRatio };
  }, facts.step_commit);
  assert.equal(mark.change, mark.index, 'the change point is the planted commit\'s point');
  assert.ok(mark.x > 0 && mark.x < mark.width, `change mark inside the plot: ${JSON.stringify(mark)}`);
  assert.match(await page.textContent('[data-testid=changes]'), /\+[5-9]\.\d %/);
  await shot('series');

  // The same series drawn in about 10 points: groups of runs, the change
  // point the first run of its group; a drag over three groups asks for
  // their runs alone.
  await open(`#/series?${q({ benchmark: facts.step_case, metric: 'time', sku: facts.sku, branch: 'main', points: 10 })}`);
  await page.waitForSelector('[data-testid=plot] canvas');
  const grouped = await page.evaluate(() => window.perfgateSeries);
  assert.equal(grouped.runs, facts.main_runs);
  assert.ok(grouped.points.length >= 10 && grouped.points.length <= 12, `groups: ${grouped.points.length}`);
  assert.equal(grouped.points.reduce((sum, p) => sum + p.runs, 0), facts.main_runs, 'every run in one group');
  assert.equal(grouped.points[grouped.changes[0].index].first_commit, facts.step_commit, 'the change begins a group');
  assert.match(await page.textContent('[data-testid=series-note]'), new RegExp(`^${facts.main_runs} runs drawn as ${grouped.points.length} points`));
  const inRange = grouped.points[1].runs + grouped.points[2].runs + grouped.points[3].runs;
  await page.evaluate(() => {
    const u = window.perfgatePlot;
    const left = u.valToPos(u.data[0][1], 'x'), right = u.valToPos(u.data[0][3], 'x');
    u.setSelect({ left: left - 1, width: right - left + 2, top: 0, height: u.bbox.height / devicePixelRatio });
  });
  await page.waitForSelector('[data-testid=whole-series]', { timeout: 15000 });
  await page.waitForSelector('body[data-ready=yes]', { timeout: 15000 });
  // The range holds the runs of those three groups, none more or fewer;
  // drawn within the URL's 10 points, so in groups again.
  const zoomed = await page.evaluate(() => window.perfgateSeries);
  assert.equal(zoomed.runs, inRange, 'the runs of the range');
  assert.equal(zoomed.points[0].first_commit, grouped.points[1].first_commit);
  assert.equal(zoomed.points[zoomed.points.length - 1].commit, grouped.points[3].commit);

  // Compare: the planted slow case of the outlier node comes first.
  const base = facts.sweep_runs[0], cand = facts.sweep_runs[3];
  timings.compare = await open(`#/compare?${q({ base, cand })}`);
  const first = await page.$('[data-testid=compare-row]');
  assert.equal(await first.getAttribute('data-benchmark'), facts.fleet_case);
  assert.match(await first.textContent(), /\+(2\d|3\d)\.\d %/);
  await shot('compare');

  // Fleet: the outlier node, and the environment field in which it differs.
  timings.fleet = await open(`#/fleet?${q({ sku: facts.sku, sweep: facts.sweep })}`);
  const outliers = await page.$$eval('[data-testid=outlier]', (rows) => rows.map((r) => r.dataset.node));
  assert.ok(outliers.length >= 1, 'an outlier');
  assert.ok(outliers.every((n) => n === facts.outlier_node), `outliers: ${outliers}`);
  assert.match(await page.textContent('[data-testid=differing-fields]'), /driver: 535\.104\.05 \(fleet 550\.54\.15\)/);
  await shot('fleet');

  // Runs: every run listed, the gated pull request with its verdict.
  timings.runs = await open('#/runs');
  const rows = await page.$$('[data-testid=runs] tbody tr');
  assert.equal(rows.length, facts.main_runs + 6);
  const verdict = await page.textContent(`tr[data-run="${facts.pr_run}"] td:nth-child(8)`);
  assert.match(verdict, /regression|pass|inconclusive/);
  await shot('runs');

  // The pull request's run: its flat case's count (a further part of the
  // case) is a row of its own beside the case's time.
  timings.run = await open(`#/run/${facts.pr_run}`);
  const caseRows = await page.$$eval('[data-testid=cases] tbody tr', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));
  const flat = caseRows.filter((cells) => cells[0] === facts.flat_case);
  assert.deepEqual(flat.map((cells) => cells[1]).sort(), ['instructions', 'time'], `rows of ${facts.flat_case}`);
  const counted = flat.find((cells) => cells[1] === 'instructions');
  assert.equal(counted[5], 'instr/iter');
  assert.equal(counted[6], '1', 'one counted process');
  assert.equal(Number(counted[2].replace(/[^0-9.e+]/g, '')), facts.pr_count, `the count as sent: ${counted[2]}`);

  // The gate report as stored.
  timings.report = await open(`#/report/${facts.report_id}`);
  assert.ok((await page.textContent('[data-testid=report-summary]')).length > 0);
  assert.ok((await page.$$('[data-testid=verdicts] tbody tr')).length >= 1);
  assert.equal((await page.textContent('[data-testid=report-candidate]')).trim(), facts.pr_run, 'the candidate run');
  const verdictCells = await page.$$eval('[data-testid=verdicts] tbody tr', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));
  assert.ok(verdictCells.some((cells) => cells[0] === facts.step_case && cells[2] !== '' && cells[6] !== ''),
    `the stepped case with its baseline and verdict: ${JSON.stringify(verdictCells)}`);
  await shot('report');

  // Regressions: the one planted, triaged from the page.
  timings.regressions = await open('#/regressions');
  const regs = await page.$$('[data-testid=regression]');
  assert.equal(regs.length, 1);
  assert.equal(await regs[0].getAttribute('data-state'), 'new');
  const form = '[data-testid=regression] [data-testid=triage]';
  await page.selectOption(`${form} select[name=state]`, 'acknowledged');
  await page.fill(`${form} input[name=note]`, 'triaged from the page');
  await page.fill(`${form} input[name=by]`, 'browser-test');
  await page.click(`${form} button[type=submit]`);
  // A read credential may not triage: the row says why and stays new.
  await page.waitForSelector(`${form} [data-testid=triage-status].error`, { timeout: 10000 });
  assert.match(await page.textContent(`${form} [data-testid=triage-status]`), /role read\) may not triage/);
  // Forget it, sign in with a gate credential, and triage.
  await page.click('[data-testid=login] button');
  await page.waitForSelector('[data-testid=auth-error][data-status="401"]');
  await signIn(facts.gate_token);
  await page.waitForSelector('[data-testid=regression][data-state=new]', { timeout: 15000 });
  await page.selectOption(`${form} select[name=state]`, 'acknowledged');
  await page.fill(`${form} input[name=note]`, 'triaged from the page');
  await page.fill(`${form} input[name=by]`, 'browser-test');
  await page.click(`${form} button[type=submit]`);
  await page.waitForSelector('[data-testid=regression][data-state=acknowledged]', { timeout: 10000 });
  // Its history reads the API's states by their short names, the detection first.
  const events = await page.textContent('[data-testid=regression] .events');
  assert.match(events, /∅ → new/);
  assert.match(events, /browser-test: new → acknowledged — triaged from the page/);
  await shot('regressions');

  // A bisection of it, stored through the API as `perfgate bisect` stores
  // one, is shown below the regression with its steps.
  const regId = Number(await page.getAttribute('[data-testid=regression]', 'data-id'));
  const api = async (route, body) => {
    const res = await fetch(`${facts.url}/api/v1/${route}`, {
      method: 'POST', body: JSON.stringify(body),
      headers: { authorization: `Bearer ${facts.gate_token}`, 'content-type': 'application/json' } });
    const text = await res.text();
    assert.equal(res.status, 200, `${route}: ${text}`);
    return JSON.parse(text);
  };
  const job = await api('bisections', { good: 'g0', bad: facts.step_commit, commits: ['c1', facts.step_commit],
                                        regression_id: regId, by: 'browser-test' });
  const probe = { benchmark: facts.step_case, metric: 'time', attempt: 1, rounds: 6, threshold: 0.05, p_value: 0.001 };
  // The messages of proto/perfgate/v1/bisection.proto in protobuf's JSON mapping.
  await api(`bisections/${job.id}/probes`, { ...probe, commit: 'c1', verdict: 'PROBE_VERDICT_CLEAN', change: 0.001,
                                             ci: { low: -0.01, high: 0.012 } });
  await api(`bisections/${job.id}/probes`, { ...probe, commit: facts.step_commit, verdict: 'PROBE_VERDICT_CARRIES',
                                             change: 0.2, ci: { low: 0.17, high: 0.23 } });
  await api(`bisections/${job.id}/finish`, { state: 'BISECTION_STATE_CULPRIT', culprit: facts.step_commit, change: 0.2,
                                             ci: { low: 0.17, high: 0.23 }, summary: `culprit ${facts.step_commit}` });
  timings.bisection = await open(`#/regressions?id=${regId}`);
  await page.waitForSelector('[data-testid=bisections] section[data-state=culprit]', { timeout: 10000 });
  const steps = await page.$$eval('[data-testid=bisections] tr[data-verdict]', (rows) => rows.map((r) => r.dataset.verdict));
  assert.deepEqual(steps, ['clean', 'carries']);
  assert.match(await page.textContent('[data-testid=bisections] h2'), /culprit .*\+20/);
  await shot('bisection');

  assert.deepEqual(errors, [], 'errors in the page');
  console.log(`dashboard views rendered (ms from navigation): ${JSON.stringify(timings)}`);
} catch (e) {
  console.error(`dashboard.test.mjs: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
