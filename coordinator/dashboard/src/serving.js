// Latency against offered rate for the serving sweeps of one run: the
// points of inference/serve equal but for their rate, TTFT and TPOT
// percentiles (run medians) on a log rate axis, the knee marked where the
// run drew one (inference/serve_knee). Energy per output token is shown only
// where the case reported it; a host case has no device counter.
import { h, measured } from './dom.js';

// "inference/serve{a=1,rate=2,...}" -> [key without rate, rate]
function splitRate(benchmark) {
  const m = benchmark.match(/^inference\/serve\{(.*)\}$/);
  if (!m) return null;
  const params = m[1].split(',');
  const rate = params.find((p) => p.startsWith('rate='));
  if (!rate) return null;
  return [params.filter((p) => p !== rate).join(','), Number(rate.slice(5))];
}

// Sweeps of this run: key -> { rates: [...], byMetric: { metric: { rate: median } }, knee }.
export function servingSweeps(summaries) {
  const sweeps = new Map();
  for (const s of summaries) {
    const split = splitRate(s.benchmark);
    if (!split) continue;
    const [key, rate] = split;
    if (!sweeps.has(key)) sweeps.set(key, { rates: new Set(), byMetric: {}, knee: null, energy: false });
    const sw = sweeps.get(key);
    sw.rates.add(rate);
    (sw.byMetric[s.metric] ||= {})[rate] = measured(s.median);
    if (s.metric === 'energy_per_token') sw.energy = true;
  }
  for (const s of summaries) {
    const m = s.benchmark.match(/^inference\/serve_knee\{(.*)\}$/);
    if (!m || s.metric !== 'knee_rate') continue;
    // The knee's key is the sweep's with rates=A+B+... and objective=pXX added.
    const key = m[1].replace(/(^|,)rates=[\d.+]+/, '').replace(/(^|,)objective=[^,]*/, '').replace(/^,/, '');
    if (sweeps.has(key)) sweeps.get(key).knee = measured(s.median);
  }
  return [...sweeps.entries()].filter(([, sw]) => sw.rates.size >= 2);
}

const kLines = [
  ['ttft_p50', '#7fa7e0'], ['ttft_p99', '#2f5fb3'], ['tpot_p50', '#e0a87f'], ['tpot_p99', '#b35f2f'],
];

function kneeMark(knee) {
  return (u) => {
    if (!knee) return;
    const x = u.valToPos(knee, 'x', true);
    const { ctx } = u;
    ctx.save();
    ctx.strokeStyle = '#c0392b';
    ctx.setLineDash([6, 4]);
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.fillStyle = '#c0392b';
    ctx.fillText(`knee ${knee}/s`, x + 4, u.bbox.top + 12);
    ctx.restore();
  };
}

// One small plot per sweep, or nothing when the run has no sweep.
export function servingPlots(summaries) {
  return servingSweeps(summaries).map(([key, sw]) => {
    const rates = [...sw.rates].sort((a, b) => a - b);
    const lines = kLines.filter(([m]) => sw.byMetric[m]);
    const data = [rates, ...lines.map(([m]) => rates.map((r) => sw.byMetric[m][r] ?? null))];
    const el = h('div', { class: 'serving-plot', 'data-testid': 'serving-plot' });
    new uPlot({
      width: 520, height: 240,
      scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
      axes: [{ label: 'offered rate (requests/s)' }, { label: 'ms', size: 60 }],
      series: [{ label: 'rate' }, ...lines.map(([m, c]) => ({ label: m, stroke: c, width: 1.5, points: { show: true, size: 5 } }))],
      hooks: { draw: [kneeMark(sw.knee)] },
    }, data, el);
    return h('div', {},
      h('h3', {}, `inference/serve{${key}}`),
      el,
      h('p', { class: 'muted' }, sw.knee === null ? 'no knee drawn' : `knee: ${sw.knee} requests/s`,
        sw.energy ? '' : ' · energy per output token: unavailable (no device energy counter)'));
  });
}
