/**
 * The dashboard's page and style sheet: no build step, no CDN, no inline script (the page loads `/dashboard/view.js`,
 * which fills in every element by id). The page carries the admin's answers of the moment it was served as a JSON
 * data block (`#initial`, never executed), and the script blocks rendering until it has drawn them, so the first
 * frame already shows numbers and charts; the polls take over from there.
 */
import { P99_WINDOW } from './history.js';

const P99_WINDOW_TEXT = `${P99_WINDOW} s`;

export const DASHBOARD_CSS = `
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --fg: #1c2330; --muted: #5d6778; --line: #dde2ea; --ok: #1f8a4c; --bad: #c23a2b; --accent: #2f6fdb; }
@media (prefers-color-scheme: dark) { :root { --bg: #12161d; --card: #1b212b; --fg: #e6e9ef; --muted: #97a1b3; --line: #2c3440; --accent: #6f9ff0; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
header { display: flex; align-items: center; gap: 16px; padding: 12px 20px; border-bottom: 1px solid var(--line); background: var(--card); }
header h1 { font-size: 17px; margin: 0; }
header .meta { color: var(--muted); font-size: 12px; }
.badge { padding: 2px 10px; border-radius: 10px; font-weight: 600; font-size: 12px; color: #fff; background: var(--muted); }
.badge.ok { background: var(--ok); } .badge.bad { background: var(--bad); }
main { padding: 16px 20px; display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 12px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
section.wide { grid-column: 1 / -1; }
section.half { grid-column: span 2; }
h2 { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 0 0 6px; font-weight: 600; }
.big { font-size: 28px; font-weight: 600; font-variant-numeric: tabular-nums; }
.small { color: var(--muted); font-size: 12px; }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid var(--line); }
th { color: var(--muted); font-weight: 600; font-size: 12px; }
input { width: 100%; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); margin-bottom: 8px; }
#status { color: var(--bad); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr)); gap: 16px; }
.charts h3 { font-size: 13px; margin: 0 0 2px; font-weight: 600; }
svg.chart { display: block; width: 100%; height: 96px; margin-top: 4px; border-bottom: 1px solid var(--line); background: linear-gradient(var(--line), var(--line)) 0 50% / 100% 1px no-repeat; }
svg.chart path { fill: none; stroke-width: 2; stroke-linejoin: round; stroke-linecap: round; vector-effect: non-scaling-stroke; }
.s-rate { stroke: var(--accent); color: var(--accent); } .s-hit { stroke: var(--ok); color: var(--ok); } .s-miss { stroke: #d9822b; color: #d9822b; }
.key { font-weight: 600; }
`;

/** The embedded data as a JSON data block: `<` escaped, so no text in it can end the element. */
function dataBlock(initial: unknown): string {
  return `<script type="application/json" id="initial">${JSON.stringify(initial ?? null).replace(/</g, '\\u003c')}</script>`;
}

/** The page, with the admin's answers of the moment (`initial`: see view.ts for the shape; null: the page polls first). */
export function dashboardHtml(initial: unknown): string {
  return DASHBOARD_HTML.replace('<!--initial-->', () => dataBlock(initial)); // a function: no `$&` patterns in the data
}

const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>actor-edge proxy</title>
<link rel="stylesheet" href="/dashboard/style.css">
<!--initial-->
<script type="module" src="/dashboard/view.js" blocking="render"></script>
</head>
<body data-polls="0">
<header>
  <h1>actor-edge proxy</h1>
  <span id="ready" class="badge">…</span>
  <span class="meta" id="ready-reasons"></span>
  <span class="meta">processes <span id="processes">—</span> · every <span id="interval">—</span> ms · updated <span id="updated">—</span></span>
  <span class="meta" id="status"></span>
</header>
<main>
  <section><h2>Requests / s</h2><div class="big" id="request-rate">—</div><div class="small"><span id="requests-total">0</span> since the last stats reset</div></section>
  <section><h2>Hit ratio</h2><div class="big" id="hit-ratio">—</div><div class="small"><span id="hits">0</span> hits · <span id="misses">0</span> misses (since reset)</div></section>
  <section><h2 id="resolver-label">ext_proc streams/s</h2><div class="big" id="resolver-rate">—</div><div class="small"><span id="resolver-total">0</span> since reset · <span id="resolver-note"></span></div></section>
  <section><h2>Open tunnels</h2><div class="big"><span id="tunnels-upgrade">0</span> + <span id="tunnels-connect">0</span></div><div class="small">WebSocket upgrades + CONNECT tunnels</div></section>
  <section><h2>Re-runs by reason</h2><div class="big" id="rerun-rate">—</div><div class="small">per second · stale <span id="reruns-stale">0</span> · connect <span id="reruns-connect">0</span> · reset <span id="reruns-reset">0</span> (since reset)</div></section>
  <section class="wide"><h2>The last <span id="history-window">—</span>, per second</h2><div class="charts">
    <div><h3>Requests / s</h3><div class="small"><span class="key s-rate">now <span id="chart-rate-now">—</span></span> · top <span id="chart-rate-max">—</span></div><svg id="chart-rate" class="chart" viewBox="0 0 300 96" preserveAspectRatio="none"></svg></div>
    <div><h3>Hit ratio</h3><div class="small"><span class="key s-hit">now <span id="chart-hit-now">—</span></span> · hit ÷ (hit + miss + re-run) · top 100 %</div><svg id="chart-hit" class="chart" viewBox="0 0 300 96" preserveAspectRatio="none"></svg></div>
    <div><h3>p99 latency by cache outcome</h3><div class="small"><span class="key s-hit">hit <span id="chart-p99-hit-now">—</span> ms</span> · <span class="key s-miss">miss <span id="chart-p99-miss-now">—</span> ms</span> · log scale 0.1 – <span id="chart-p99-max">—</span> ms · each over ${P99_WINDOW_TEXT}</div><svg id="chart-p99" class="chart" viewBox="0 0 300 96" preserveAspectRatio="none"></svg></div>
  </div></section>
  <section class="half"><h2>Errors</h2><div class="small">since reset: 4xx <span id="errors-4xx">0</span> · 5xx <span id="errors-5xx">0</span></div><div class="small">upstream connect failures <span id="failures-connect">0</span> · resets <span id="failures-reset">0</span> · ext_proc errors and timeouts <span id="failures-extproc">0</span></div>
    <table><thead><tr><th>status</th><th>answers (lifetime)</th></tr></thead><tbody id="errors"></tbody></table></section>
  <section class="half"><h2>Latency by cache outcome (last <span id="latency-window">0</span> s)</h2>
    <table><thead><tr><th>cache</th><th>requests</th><th>p50 ms</th><th>p99 ms</th></tr></thead><tbody id="latency"></tbody></table></section>
  <section class="wide"><h2>Bindings (<span id="bindings-matched">0</span> matching)</h2>
    <input id="search" type="search" placeholder="search actor (atespace/name) or worker address" autocomplete="off">
    <table><thead><tr><th>actor</th><th>worker</th><th>expires in s</th><th>hits</th><th>processes</th></tr></thead><tbody id="bindings"></tbody></table></section>
</main>
</body>
</html>
`;
