// One series: run medians over commits (or time) with the p5–p95 band,
// change points marked with their commit and size, invalid and throttled
// runs drawn apart, drag to zoom (double click resets). Selection by
// benchmark and metric, SKU, branch and node, all kept in the URL. A series
// of more runs than POINTS comes drawn in groups of runs (the API's
// `points`; the URL's `points` sets another bound), each change point
// beginning a group; dragging over it asks for that range run by run
// (`from`, `to`). The answer is SeriesResponse of api.proto.
import { get } from './api.js';
import { h, link, num, pct, select, short, table, when, word } from './dom.js';
import { navigate } from './nav.js';
import { stateOf } from './regressions.js';

const POINTS = 1000;

// A message's time (RFC 3339) as seconds since the epoch, as uPlot's time axis and the URL take it.
const secs = (text) => Date.parse(text) / 1000;

function plotData(points, byTime) {
  const xs = points.map((p, i) => (byTime ? secs(p.t) : i));
  const valid = (p) => p.invalid_reasons.length === 0;
  const median = (p) => p.median ?? null;
  return [
    xs,
    points.map((p) => (valid(p) ? median(p) : null)),
    points.map((p) => (valid(p) ? p.p5 ?? null : null)),
    points.map((p) => (valid(p) ? p.p95 ?? null : null)),
    points.map((p) => (valid(p) ? null : median(p))),
    points.map((p) => (valid(p) && Number(p.n_throttled) > 0 ? median(p) : null)),
  ];
}

// Draws each change point as a dashed line labelled with its commit and size.
function changeMarks(changes, xs) {
  return (u) => {
    const { ctx } = u;
    ctx.save();
    ctx.strokeStyle = '#c0392b';
    ctx.fillStyle = '#c0392b';
    ctx.setLineDash([6, 4]);
    ctx.lineWidth = 1.5 * devicePixelRatio;
    ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
    for (const c of changes) {
      const x = u.valToPos(xs[c.index], 'x', true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.fillText(`${short(c.commit)} ${pct(c.change)}`, x + 4 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio);
    }
    ctx.restore();
  };
}

// The runs a drag selected, as the from/to of their first and last: asked
// again run by run when the series came in groups.
function zoomToRuns(s, xs, go) {
  return (u) => {
    if (s.runs <= s.points.length || u.select.width <= 0) return;
    const lo = u.posToVal(u.select.left, 'x'), hi = u.posToVal(u.select.left + u.select.width, 'x');
    const inside = xs.map((x, i) => [x, i]).filter(([x]) => x >= lo && x <= hi).map(([, i]) => i);
    if (!inside.length) return;
    const first = s.points[inside[0]], last = s.points[inside[inside.length - 1]];
    go({ from: String(secs(first.t_first)), to: String(secs(last.t) + 0.001) });
  };
}

function drawPlot(el, data, s, byTime, go) {
  const points = s.points;
  const opts = {
    width: Math.max(600, Math.min(1400, window.innerWidth - 48)),
    height: 360,
    cursor: { drag: { x: true, y: false } },
    scales: { x: { time: byTime } },
    axes: [
      byTime ? {} : { values: (u, ticks) => ticks.map((t) => (Number.isInteger(t) && points[t] ? short(points[t].commit).slice(0, 7) : '')) },
      { label: s.unit, size: 70 },
    ],
    series: [
      { label: byTime ? 'finished' : 'commit', value: (u, v) => (v === null || v === undefined ? '' : byTime ? when(v) : short(points[v]?.commit)) },
      { label: 'median', stroke: '#2f5fb3', width: 1.5, points: { show: true, size: 5 } },
      { label: 'p5', stroke: 'rgba(47,95,179,0.35)', width: 1 },
      { label: 'p95', stroke: 'rgba(47,95,179,0.35)', width: 1 },
      { label: 'invalid', stroke: '#b9770e', width: 0, points: { show: true, size: 8, fill: '#fff' }, paths: () => null },
      { label: 'throttled', stroke: '#8e44ad', width: 0, points: { show: true, size: 8, fill: '#8e44ad' }, paths: () => null },
    ],
    bands: [{ series: [3, 2], fill: 'rgba(47,95,179,0.12)' }],
    hooks: { draw: [changeMarks(s.changes, data[0])], setSelect: [zoomToRuns(s, data[0], go)] },
  };
  return new uPlot(opts, data, el);
}

export async function renderSeries(root, params) {
  const p = Object.fromEntries(['benchmark', 'metric', 'sku', 'branch', 'node', 'x', 'limit', 'from', 'to', 'points'].map((k) => [k, params.get(k) || '']));
  const seriesOf = () => get('series', { benchmark: p.benchmark, metric: p.metric, sku: p.sku, branch: p.branch, node: p.node,
    limit: p.limit || 100, points: p.points || POINTS, from: p.from, to: p.to });
  // A series named in the URL is asked for beside the catalog, not after it
  // (its error, if any, is thrown where it is awaited below).
  const asked = p.benchmark ? seriesOf() : null;
  asked?.catch(() => {});
  const catalog = await get('catalog');
  if (!p.benchmark && catalog.metrics.length) Object.assign(p, { benchmark: catalog.metrics[0].benchmark, metric: catalog.metrics[0].metric });
  const go = (change) => navigate('series', { ...p, ...change });
  const metricOptions = catalog.metrics.map((m) => [`${m.benchmark}\n${m.metric}`, `${m.benchmark} · ${m.metric}`]);
  const filters = h('div', { class: 'filters' },
    select('series', metricOptions, `${p.benchmark}\n${p.metric}`, (v) => { const [benchmark, metric] = v.split('\n'); go({ benchmark, metric }); }, 'benchmark · metric'),
    select('sku', [['', 'all'], ...catalog.skus.map((x) => [x, x])], p.sku, (v) => go({ sku: v })),
    select('branch', [['', 'all'], ...catalog.branches.map((x) => [x, x])], p.branch, (v) => go({ branch: v })),
    select('node', [['', 'all'], ...catalog.nodes.map((x) => [x, x])], p.node, (v) => go({ node: v })),
    select('x', [['', 'commits'], ['time', 'time']], p.x, (v) => go({ x: v }), 'x axis'),
    select('limit', [['', 'newest 100 runs'], ['200', 'newest 200'], ['500', 'newest 500'], ['1000', 'newest 1000'], ['5000', 'newest 5000'], ['10000', 'newest 10000']], p.limit, (v) => go({ limit: v }), 'runs'));
  root.append(h('h1', {}, 'Series'), filters);
  if (!p.benchmark) { root.append(h('p', { class: 'muted' }, 'No results stored yet.')); return; }
  const s = await (asked || seriesOf());
  const byTime = p.x === 'time';
  const data = plotData(s.points, byTime);
  const plotEl = h('div', { 'data-testid': 'plot', 'data-points': s.points.length,
    'data-valid-points': s.points.filter((x) => x.invalid_reasons.length === 0).length });
  const grouped = s.runs > s.points.length;
  const direction = word(s.direction, '').replaceAll('_', ' ');
  const range = p.from || p.to
    ? [' Showing the runs finished from ', when(Number(p.from)), ' to ', when(Number(p.to)), ' (', h('a', { href: '#', 'data-testid': 'whole-series', onclick: (e) => { e.preventDefault(); go({ from: '', to: '' }); } }, 'whole series'), ').']
    : [];
  root.append(h('p', { class: 'legend-note', 'data-testid': 'series-note' }, grouped
    ? `${s.runs} runs drawn as ${s.points.length} points, ${direction}: each point the median of a group of runs, its band from their lowest p5 to their highest p95, each change point the first run of its group; hollow: every run of the group invalid for gating; purple: throttled samples. Drag over a range to see it run by run, double click to reset.`
    : `${s.points.length} runs, ${direction}; band: p5–p95 of each run; hollow: invalid for gating (left out of change points); purple: runs with throttled samples. Drag to zoom, double click to reset.`, ...range), plotEl);
  // Kept on window for the browser tests and for a look from the console.
  window.perfgateSeries = s;
  window.perfgatePlot = drawPlot(plotEl, data, s, byTime, go);
  const changes = s.changes.map((c) => h('tr', { 'data-testid': 'change-point', 'data-commit': c.commit },
    h('td', { class: 'mono' }, c.commit), h('td', {}, h('a', { href: link(`run/${c.run_id}`) }, 'first run')),
    h('td', { class: 'num' }, num(c.median_before)), h('td', { class: 'num' }, num(c.median_after)),
    h('td', { class: `num ${c.change > 0 ? 'worse' : 'better'}` }, pct(c.change)), h('td', { class: 'num' }, c.p_value === undefined ? '' : c.p_value.toFixed(3))));
  root.append(h('h2', {}, 'Change points'), changes.length
    ? table(['first commit of the new level', '', 'before', 'after', 'change', 'p'], changes, { 'data-testid': 'changes' })
    : h('p', { class: 'muted' }, 'None found in the valid runs.'));
  if (s.regressions.length) {
    root.append(h('h2', {}, 'Regressions of this series'), h('ul', {}, s.regressions.map((r) => h('li', {},
      h('a', { href: link('regressions', { id: r.id }) }, `#${r.id}`), ` ${short(r.bad_commit)} ${pct(r.change)} on ${r.sku}/${r.branch}: `, h('span', { class: `state ${stateOf(r)}` }, stateOf(r))))));
  }
}
