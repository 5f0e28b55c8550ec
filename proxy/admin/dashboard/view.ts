/**
 * The dashboard's browser side (served as `/dashboard/view.js`, loaded by `/dashboard` as an ES module): polls
 * `/stats`, `/metrics` and `/ready` every `?interval=` ms (default 1000), keeps a minute of snapshots for the
 * latency window, and renders the numbers model.ts computes into the page's elements (by id); the bindings table
 * asks `/cache` with the search box's text. Only `textContent` is ever written, so nothing the admin returns is
 * interpreted as markup. `document.body.dataset.polls` counts completed polls (tests wait on it).
 *
 * The few DOM types it uses are declared here (the project compiles for Node.js, without the DOM library).
 */
import { bindingRows, dashboardView, formatNumber, parseMetrics, type DashboardView, type Snapshot } from './model.js';

interface Elem {
  textContent: string | null;
  className: string;
  readonly dataset: Record<string, string | undefined>;
  replaceChildren(...nodes: Elem[]): void;
  appendChild(node: Elem): Elem;
  addEventListener(type: string, listener: () => void): void;
}
interface InputElem extends Elem {
  value: string;
}
interface Doc {
  readonly body: Elem;
  getElementById(id: string): Elem | null;
  createElement(tag: string): Elem;
}
declare const document: Doc;
declare const location: { readonly search: string };

const LATENCY_WINDOW_MS = 60_000;
const params = new URLSearchParams(location.search);
const intervalMs = Math.max(200, Number(params.get('interval') ?? 1000) || 1000);

function el(id: string): Elem {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`dashboard: no element #${id}`);
  return e;
}

function set(id: string, text: string): void {
  el(id).textContent = text;
}

function cell(text: string): Elem {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

function row(cells: readonly string[], data?: Record<string, string>): Elem {
  const tr = document.createElement('tr');
  for (const c of cells) tr.appendChild(cell(c));
  for (const [k, v] of Object.entries(data ?? {})) tr.dataset[k] = v;
  return tr;
}

function percent(ratio: number | null): string {
  return ratio === null ? '—' : `${(ratio * 100).toFixed(1)} %`;
}

function render(v: DashboardView): void {
  set('processes', String(v.processes));
  set('request-rate', formatNumber(v.requestRate, 1));
  set('requests-total', String(v.requestsTotal));
  set('hit-ratio', v.cacheEnabled ? percent(v.hitRatio) : 'cache off');
  set('hits', String(v.hits));
  set('misses', String(v.misses));
  set('resolver-label', v.resolver.label);
  set('resolver-rate', formatNumber(v.resolver.rate, 1));
  set('resolver-total', String(v.resolver.total));
  set('resolver-note', v.resolver.note);
  set('reruns-stale', String(v.reruns.stale));
  set('reruns-connect', String(v.reruns.connect));
  set('reruns-reset', String(v.reruns.reset));
  set('rerun-rate', formatNumber(v.rerunRate, 1));
  set('errors-4xx', String(v.errorsSinceReset['4xx']));
  set('errors-5xx', String(v.errorsSinceReset['5xx']));
  set('failures-connect', String(v.upstreamFailures.connect));
  set('failures-reset', String(v.upstreamFailures.reset));
  set('failures-extproc', String(v.upstreamFailures.extprocErrors + v.upstreamFailures.extprocTimeouts));
  set('tunnels-upgrade', String(v.tunnels.upgrade));
  set('tunnels-connect', String(v.tunnels.connect));
  el('errors').replaceChildren(...(v.errorsByCode.length === 0 ? [row(['none', ''])] : v.errorsByCode.map((e) => row([e.code, String(e.count)], { code: e.code }))));
  set('latency-window', formatNumber(v.latencyWindowS, 0));
  el('latency').replaceChildren(
    ...(v.latency.length === 0
      ? [row(['no requests yet', '', '', ''])]
      : v.latency.map((r) => row([r.cache, String(r.count), formatNumber(r.p50Ms, 2), formatNumber(r.p99Ms, 2)], { cache: r.cache }))),
  );
}

async function text(path: string, accept?: string): Promise<{ status: number; body: string }> {
  const res = await fetch(path, { headers: accept === undefined ? {} : { accept } });
  return { status: res.status, body: await res.text() };
}

const snapshots: Snapshot[] = [];
let polls = 0;

async function poll(): Promise<void> {
  const [stats, metrics, ready] = await Promise.all([text('/stats'), text('/metrics'), text('/ready', 'application/json')]);
  if (stats.status !== 200 || metrics.status !== 200) throw new Error(`admin answered ${stats.status} / ${metrics.status}`);
  const snap: Snapshot = { at: performance.now(), stats: JSON.parse(stats.body) as unknown, metrics: parseMetrics(metrics.body) };
  const previous = snapshots[snapshots.length - 1];
  snapshots.push(snap);
  while (snapshots.length > 2 && snap.at - (snapshots[0] as Snapshot).at > LATENCY_WINDOW_MS) snapshots.shift();
  render(dashboardView(snap, previous, snapshots.length > 1 ? snapshots[0] : undefined));
  const r = JSON.parse(ready.body) as { state?: string; reasons?: string[] };
  const badge = el('ready');
  badge.textContent = r.state ?? String(ready.status);
  badge.className = ready.status === 200 ? 'badge ok' : 'badge bad';
  set('ready-reasons', (r.reasons ?? []).join(' · '));
}

async function refreshBindings(): Promise<void> {
  const q = (el('search') as InputElem).value.trim();
  const query = new URLSearchParams({ order: 'key', limit: '50', ...(q === '' ? {} : { q }) });
  const res = await text(`/cache?${query}`);
  if (res.status === 404) {
    el('bindings').replaceChildren(row(['the actor cache is off', '', '', '', '']));
    set('bindings-matched', '0');
    return;
  }
  const { rows, matched } = bindingRows(JSON.parse(res.body) as unknown);
  set('bindings-matched', String(matched));
  const table = el('bindings');
  table.dataset.query = q;
  table.replaceChildren(
    ...(rows.length === 0
      ? [row(['no bindings', '', '', '', ''])]
      : rows.map((b) => row([b.key, b.address, formatNumber(b.expiresInMs / 1000, 1), String(b.hits), String(b.processes)], { key: b.key }))),
  );
}

async function loop(): Promise<void> {
  try {
    await poll();
    if (polls % 2 === 0) await refreshBindings();
    set('status', '');
  } catch (err) {
    set('status', `admin unreachable: ${(err as Error).message}`);
  }
  polls++;
  document.body.dataset.polls = String(polls);
  set('updated', new Date().toLocaleTimeString());
  setTimeout(() => void loop(), intervalMs);
}

let searchTimer: ReturnType<typeof setTimeout> | undefined;
el('search').addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => void refreshBindings().catch(() => undefined), 200);
});
set('interval', String(intervalMs));
void loop();
