// Page load times of the dashboard's views: for each view, the median over
// five loads of the milliseconds from the start of navigation to the view
// drawn with its data, as the page itself measures it (performance.now()
// when it has rendered: body[data-load-ms]). Each load starts from another
// page of the same coordinator, as following a link does. Argument: JSON
// with url, chromium, the views' hashes and the token the page sends.
// Prints one JSON line.
import { chromium } from 'playwright-core';

const args = JSON.parse(process.argv[2]);
const browser = await chromium.launch({ executablePath: args.chromium, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
// The token as the page's box keeps it, in every page of this tab.
if (args.token) await page.addInitScript((t) => sessionStorage.setItem('perfgate.token', t), args.token);
const out = {};
for (const [name, hash] of Object.entries(args.views)) {
  const times = [];
  for (let i = 0; i < 6; ++i) {
    await page.goto(`${args.url}/healthz`);
    await page.goto(`${args.url}/${hash}`);
    await page.waitForSelector('body[data-ready=yes]', { timeout: 30000 });
    const error = await page.$('[data-testid=error], [data-testid=auth-error]');
    if (error) throw new Error(`${name}: ${await error.textContent()}`);
    const ms = Number(await page.getAttribute('body', 'data-load-ms'));
    if (i > 0) times.push(ms);  // the first load warms the caches
  }
  times.sort((a, b) => a - b);
  // Where the last load spent its time: the page's own files, then the API.
  const detail = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const api = performance.getEntriesByType('resource').filter((r) => r.name.includes('/api/'));
    return { dom_ready_ms: Math.round(nav.domContentLoadedEventEnd), api_ms: Math.round(Math.max(0, ...api.map((r) => r.responseEnd)) - Math.min(...api.map((r) => r.startTime))) };
  });
  out[name] = { median_ms: times[2], max_ms: times[4], ...detail };
}
console.log(JSON.stringify(out));
await browser.close();
