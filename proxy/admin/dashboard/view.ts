/**
 * The dashboard's browser side (served as `/dashboard/view.js`, loaded by `/dashboard` as an ES module): first draws
 * the admin's answers embedded in the page (`#initial`), then polls `/stats`, `/metrics`, `/ready` and
 * `/stats/history?since=` every `?interval=` ms (default 1000), keeps a minute of snapshots for the latency window and
 * the last minutes of history for the charts, and renders the numbers model.ts and history.ts compute into the
 * page's elements (by id); the bindings table asks `/cache` with the search box's text. Only `textContent` and SVG
 * path data are ever written, so nothing the admin returns is interpreted as markup. `document.body.dataset.polls`
 * counts completed polls and `dataset.frame` says what the last frame was drawn from (tests wait on them).
 *
 * The few DOM types it uses are declared here (the project compiles for Node.js, without the DOM library).
 */
import { bindingRows, dashboardView, formatNumber, parseMetrics, type DashboardView, type Snapshot } from './model.js';
import { historyPoints, linePath, mergeHistory, niceCeil, readHistory, type HistoryDoc, type HistoryPoint } from './history.js';

interface Elem {
  textContent: string | null;
  className: string;
  readonly dataset: Record<string, string | undefined>;
  replaceChildren(...nodes: Elem[]): void;
  appendChild(node: Elem): Elem;
  addEventListener(type: string, listener: () => void): void;
  setAttribute(name: string, value: string): void;
}
interface InputElem extends Elem {
  value: string;
}
interface Doc {
  readonly body: Elem;
  getElementById(id: string): Elem | null;
  createElement(tag: string): Elem;
  createElementNS(ns: string, tag: string): Elem;
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

function render(v: DashboardView, lastSecond: HistoryPoint | undefined): void {
  set('processes', String(v.processes));
  // Before a second poll there is no rate between polls: the last whole second of the history is one.
  set('request-rate', formatNumber(v.requestRate ?? lastSecond?.rate ?? null, 1));
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

const SVG = 'http://www.w3.org/2000/svg';
const P99_FLOOR_MS = 0.1;
const BOX = { width: 300, height: 96 };

/** Draws the series into the chart `id` (one path each, `data-points`: how many points it joins). */
function chart(id: string, points: readonly HistoryPoint[], scale: { readonly yMax: number; readonly yMin?: number }, series: readonly { readonly cls: string; readonly value: (p: HistoryPoint) => number | null }[]): void {
  const from = points[0]?.at ?? 0;
  const to = points[points.length - 1]?.at ?? 0;
  const box = { ...BOX, ...scale, from, to, gapMs: 2.5 * (history?.intervalMs ?? 1000) };
  el(id).replaceChildren(
    ...series.map((s) => {
      const path = document.createElementNS(SVG, 'path');
      const values = points.map((p) => ({ at: p.at, value: s.value(p) }));
      path.setAttribute('d', linePath(values, box));
      path.setAttribute('class', s.cls);
      path.dataset.points = String(values.filter((v) => v.value !== null).length);
      return path;
    }),
  );
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

function renderCharts(doc: HistoryDoc): HistoryPoint | undefined {
  const points = historyPoints(doc);
  const last = points[points.length - 1];
  const span = points.length === 0 ? 0 : (last as HistoryPoint).at - (points[0] as HistoryPoint).at + doc.intervalMs;
  set('history-window', duration(span));
  const rateMax = niceCeil(Math.max(...points.map((p) => p.rate), 1));
  chart('chart-rate', points, { yMax: rateMax }, [{ cls: 's-rate', value: (p) => p.rate }]);
  set('chart-rate-now', `${formatNumber(last?.rate ?? null, 1)}/s`);
  set('chart-rate-max', `${formatNumber(rateMax, 0)}/s`);
  chart('chart-hit', points, { yMax: 1 }, [{ cls: 's-hit', value: (p) => p.hitRatio }]);
  set('chart-hit-now', percent(last?.hitRatio ?? null));
  // A log scale from 0.1 ms: hits and misses differ a hundredfold.
  const p99Max = 10 ** Math.ceil(Math.log10(Math.max(...points.flatMap((p) => [p.p99HitMs ?? 0, p.p99MissMs ?? 0]), 1)));
  chart('chart-p99', points, { yMin: P99_FLOOR_MS, yMax: p99Max }, [
    { cls: 's-miss', value: (p) => p.p99MissMs },
    { cls: 's-hit', value: (p) => p.p99HitMs },
  ]);
  set('chart-p99-hit-now', formatNumber(last?.p99HitMs ?? null, 2));
  set('chart-p99-miss-now', formatNumber(last?.p99MissMs ?? null, 2));
  set('chart-p99-max', formatNumber(p99Max, 0));
  return last;
}

async function text(path: string, accept?: string): Promise<{ status: number; body: string }> {
  const res = await fetch(path, { headers: accept === undefined ? {} : { accept } });
  return { status: res.status, body: await res.text() };
}

const snapshots: Snapshot[] = [];
let history: HistoryDoc | undefined;
let polls = 0;

interface ReadyAnswer {
  readonly status: number;
  readonly body: { state?: string; reasons?: string[] };
}

/** Renders one set of the admin's answers (a poll's, or those embedded in the page). */
function show(stats: unknown, metrics: string, ready: ReadyAnswer, freshHistory: HistoryDoc | undefined): void {
  const snap: Snapshot = { at: performance.now(), stats, metrics: parseMetrics(metrics) };
  const previous = snapshots[snapshots.length - 1];
  snapshots.push(snap);
  while (snapshots.length > 2 && snap.at - (snapshots[0] as Snapshot).at > LATENCY_WINDOW_MS) snapshots.shift();
  if (freshHistory !== undefined) history = mergeHistory(history, freshHistory);
  const lastSecond = history === undefined ? undefined : renderCharts(history);
  render(dashboardView(snap, previous, snapshots.length > 1 ? snapshots[0] : undefined), lastSecond);
  const badge = el('ready');
  badge.textContent = ready.body.state ?? String(ready.status);
  badge.className = ready.status === 200 ? 'badge ok' : 'badge bad';
  set('ready-reasons', (ready.body.reasons ?? []).join(' · '));
}

async function poll(): Promise<void> {
  // A few samples back: a cluster primary may have summed the newest one before every worker had taken it.
  const since = history?.samples[Math.max(0, history.samples.length - 3)]?.at;
  const [stats, metrics, ready, fresh] = await Promise.all([
    text('/stats'),
    text('/metrics'),
    text('/ready', 'application/json'),
    text(since === undefined ? '/stats/history' : `/stats/history?since=${since - 1}`),
  ]);
  if (stats.status !== 200 || metrics.status !== 200) throw new Error(`admin answered ${stats.status} / ${metrics.status}`);
  const freshHistory = fresh.status === 200 ? readHistory(JSON.parse(fresh.body) as unknown) : undefined;
  show(JSON.parse(stats.body) as unknown, metrics.body, { status: ready.status, body: JSON.parse(ready.body) as ReadyAnswer['body'] }, freshHistory);
}

/** The answers the admin embedded in the page (routes.ts), drawn before the first paint; false when there are none. */
function showInitial(): boolean {
  const data = JSON.parse(el('initial').textContent ?? 'null') as { stats?: unknown; metrics?: unknown; ready?: ReadyAnswer; history?: unknown } | null;
  if (data === null || data.stats === null || typeof data.metrics !== 'string' || data.ready === undefined) return false;
  show(data.stats, data.metrics, data.ready, readHistory(data.history));
  return true;
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
    // Every other poll; after an embedded first frame (which asked at once) the first poll skips them.
    if ((polls + (embedded ? 1 : 0)) % 2 === 0) await refreshBindings();
    set('status', '');
  } catch (err) {
    set('status', `admin unreachable: ${(err as Error).message}`);
  }
  polls++;
  document.body.dataset.polls = String(polls);
  document.body.dataset.frame = 'poll';
  set('updated', new Date().toLocaleTimeString());
  setTimeout(() => void loop(), intervalMs);
}

let searchTimer: ReturnType<typeof setTimeout> | undefined;
el('search').addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => void refreshBindings().catch(() => undefined), 200);
});
set('interval', String(intervalMs));
let embedded = false;
try {
  embedded = showInitial();
} catch (err) {
  set('status', `the page's data: ${(err as Error).message}`);
}
if (embedded) {
  document.body.dataset.frame = 'embedded';
  set('updated', new Date().toLocaleTimeString());
  void refreshBindings().catch(() => undefined);
  setTimeout(() => void loop(), intervalMs);
} else void loop();
