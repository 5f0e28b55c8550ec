/**
 * What the dashboard shows, computed from what the admin API serves: `/stats` (counters since the last reset),
 * `/metrics` (Prometheus text, lifetime values) and `/cache`. Pure functions with no DOM and no imports, so the
 * browser loads this file as it is (an ES module served by the admin) and node tests it.
 *
 * Rates are the change between two polls divided by the time between them; a counter that went down (a
 * `/stats/reset`, a restarted process) gives no rate for that poll. Quantiles are Prometheus'
 * `histogram_quantile` (linear within the bucket) over a window of snapshots.
 */
import type { StatsReading } from '../stats-document.js';

/** One sample of the Prometheus text format. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

function unescapeLabel(v: string): string {
  return v.replace(/\\(["\\n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

/** Parses Prometheus text exposition (comments and malformed lines skipped). */
export function parseMetrics(text: string): MetricSample[] {
  const out: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    if (m[3] !== undefined) {
      for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = unescapeLabel(l[2] as string);
    }
    const raw = m[4] as string;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (!Number.isNaN(value)) out.push({ name: m[1] as string, labels, value });
  }
  return out;
}

/** Samples of `name` summed by the value of `label` ('' for samples without it). */
export function sumBy(samples: readonly MetricSample[], name: string, label: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name) continue;
    const key = s.labels[label] ?? '';
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

/** A histogram as cumulative bucket counts (upper bounds ascending, +Inf last). */
export interface Histogram {
  readonly bounds: readonly number[];
  readonly cumulative: readonly number[];
  readonly count: number;
  readonly sum: number;
}

/** The histogram `name` (the `_bucket`, `_sum`, `_count` series) summed over every label but `by`, per value of `by`. */
export function histogramsBy(samples: readonly MetricSample[], name: string, by: string): Map<string, Histogram> {
  const buckets = new Map<string, Map<number, number>>();
  const sums = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const s of samples) {
    const key = s.labels[by] ?? '';
    if (s.name === `${name}_bucket`) {
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      const m = buckets.get(key) ?? new Map<number, number>();
      m.set(le, (m.get(le) ?? 0) + s.value);
      buckets.set(key, m);
    } else if (s.name === `${name}_sum`) sums.set(key, (sums.get(key) ?? 0) + s.value);
    else if (s.name === `${name}_count`) counts.set(key, (counts.get(key) ?? 0) + s.value);
  }
  const out = new Map<string, Histogram>();
  for (const [key, m] of buckets) {
    const bounds = [...m.keys()].sort((a, b) => a - b);
    const cumulative = bounds.map((b) => m.get(b) ?? 0);
    out.set(key, { bounds, cumulative, count: counts.get(key) ?? cumulative[cumulative.length - 1] ?? 0, sum: sums.get(key) ?? 0 });
  }
  return out;
}

/** `now - before` bucket by bucket (a histogram that went down, e.g. a restarted process, is taken as it is now). */
export function histogramDelta(now: Histogram, before: Histogram | undefined): Histogram {
  if (before === undefined || before.count > now.count) return now;
  const prev = new Map(before.bounds.map((b, i) => [b, before.cumulative[i] ?? 0]));
  return {
    bounds: now.bounds,
    cumulative: now.bounds.map((b, i) => Math.max(0, (now.cumulative[i] ?? 0) - (prev.get(b) ?? 0))),
    count: now.count - before.count,
    sum: now.sum - before.sum,
  };
}

/**
 * The `q` quantile of a histogram as Prometheus' `histogram_quantile` computes it: linear interpolation inside the
 * bucket that holds the rank (from 0 for the first bucket); in the +Inf bucket, the highest finite bound. Null
 * when the histogram is empty.
 */
export function quantile(q: number, h: Histogram): number | null {
  const total = h.cumulative[h.cumulative.length - 1] ?? 0;
  if (total <= 0 || h.bounds.length === 0) return null;
  const rank = q * total;
  let i = h.cumulative.findIndex((c) => c >= rank);
  if (i < 0) i = h.cumulative.length - 1;
  const upper = h.bounds[i] as number;
  if (upper === Infinity) return h.bounds.length >= 2 ? (h.bounds[h.bounds.length - 2] as number) : null;
  const lower = i === 0 ? 0 : (h.bounds[i - 1] as number);
  const below = i === 0 ? 0 : (h.cumulative[i - 1] as number);
  const inBucket = (h.cumulative[i] as number) - below;
  if (inBucket <= 0) return upper;
  return lower + (upper - lower) * ((rank - below) / inBucket);
}

/**
 * What the dashboard reads from one poll. `stats` is the proxy's `/stats` document, or the cluster primary's sum of
 * its workers', read as `StatsReading` (defensively: any field may be missing).
 */
export interface Snapshot {
  /** When it was taken (ms, any monotonic clock). */
  readonly at: number;
  readonly stats: unknown;
  readonly metrics: readonly MetricSample[];
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** `v` when it is a plain object, else `{}` (a typed `v` keeps its type: its fields are read as possibly missing). */
function obj<T extends object>(v: T | null | undefined): Partial<T>;
function obj(v: unknown): Record<string, unknown>;
function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function sumValues(v: unknown): number {
  return Object.values(obj(v)).reduce<number>((a, n) => a + num(n), 0);
}

export const DURATION_METRIC = 'actor_edge_proxy_request_duration_seconds';
export const REQUESTS_METRIC = 'actor_edge_proxy_requests_total';

export interface LatencyRow {
  /** `hit`, `miss`, `rerun`, `none`, or `all` for requests observed without a cache label. */
  readonly cache: string;
  readonly count: number;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
}

export interface DashboardView {
  readonly processes: number;
  readonly requestsTotal: number;
  readonly requestRate: number | null;
  readonly cacheEnabled: boolean;
  readonly hits: number;
  readonly misses: number;
  readonly hitRatio: number | null;
  /** ResumeActor calls/s when the proxy makes them (`--resolver apiserver`), else ext_proc streams/s. */
  readonly resolver: { readonly label: string; readonly total: number; readonly rate: number | null; readonly note: string };
  readonly reruns: Readonly<Record<'stale' | 'connect' | 'reset', number>>;
  readonly rerunRate: number | null;
  /** Client answers of 4xx and 5xx by exact status (lifetime, from /metrics). */
  readonly errorsByCode: readonly { readonly code: string; readonly count: number }[];
  readonly errorsSinceReset: { readonly '4xx': number; readonly '5xx': number };
  readonly upstreamFailures: { readonly connect: number; readonly reset: number; readonly extprocErrors: number; readonly extprocTimeouts: number };
  readonly tunnels: { readonly upgrade: number; readonly connect: number };
  readonly latency: readonly LatencyRow[];
  /** Seconds the latency window spans. */
  readonly latencyWindowS: number;
}

function rate(now: number, before: number | undefined, seconds: number): number | null {
  if (before === undefined || seconds <= 0 || now < before) return null;
  return (now - before) / seconds;
}

const CACHE_ORDER = ['hit', 'miss', 'rerun', 'none', 'all'];

/**
 * The dashboard's numbers from the latest snapshot, the one before it (rates) and the oldest one kept (the latency
 * window).
 */
export function dashboardView(now: Snapshot, previous: Snapshot | undefined, oldest: Snapshot | undefined): DashboardView {
  const s = obj(now.stats as StatsReading);
  const p = previous === undefined ? undefined : obj(previous.stats as StatsReading);
  const seconds = previous === undefined ? 0 : (now.at - previous.at) / 1000;
  const requests = obj(s.requests);
  const cache = obj(s.cache);
  const resolver = obj(s.resolver);
  const extproc = obj(s.extproc);
  const upstream = obj(s.upstream);
  const reruns = obj(s.reruns);
  const tunnels = obj(s.tunnels);
  const byStatus = obj(requests.byStatus);
  const ownResumes = resolver.kind === 'apiserver';
  const resolverTotal = ownResumes ? sumValues(resolver.resumeCalls) : num(extproc.streams);
  const resolverBefore = p === undefined ? undefined : ownResumes ? sumValues(obj(p.resolver).resumeCalls) : num(obj(p.extproc).streams);
  const rerunTotal = num(reruns.stale) + num(reruns.connect) + num(reruns.reset);
  const rerunBefore = p === undefined ? undefined : sumValues(p.reruns);

  const errorsByCode = [...sumBy(now.metrics, REQUESTS_METRIC, 'code')]
    .filter(([code, n]) => Number(code) >= 400 && n > 0)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([code, count]) => ({ code, count }));

  const latestH = histogramsBy(now.metrics, DURATION_METRIC, 'cache');
  const oldestH = oldest === undefined ? new Map<string, Histogram>() : histogramsBy(oldest.metrics, DURATION_METRIC, 'cache');
  const latency = [...latestH]
    .map(([key, h]): LatencyRow => {
      const d = histogramDelta(h, oldestH.get(key));
      const p50 = quantile(0.5, d);
      const p99 = quantile(0.99, d);
      return { cache: key === '' ? 'all' : key, count: d.count, p50Ms: p50 === null ? null : p50 * 1000, p99Ms: p99 === null ? null : p99 * 1000 };
    })
    .sort((a, b) => CACHE_ORDER.indexOf(a.cache) - CACHE_ORDER.indexOf(b.cache));

  return {
    processes: typeof s.workers === 'number' ? s.workers : 1,
    requestsTotal: num(requests.total),
    requestRate: rate(num(requests.total), p === undefined ? undefined : num(obj(p.requests).total), seconds),
    cacheEnabled: cache.enabled === true,
    hits: num(cache.hits),
    misses: num(cache.misses),
    hitRatio: typeof cache.hitRatio === 'number' ? cache.hitRatio : null,
    resolver: ownResumes
      ? { label: 'ResumeActor calls/s', total: resolverTotal, rate: rate(resolverTotal, resolverBefore, seconds), note: 'made by this proxy (--resolver apiserver)' }
      : {
          label: 'ext_proc streams/s',
          total: resolverTotal,
          rate: rate(resolverTotal, resolverBefore, seconds),
          note: 'each is one miss or refresh, at most one ResumeActor (extproc\'s own /stats counts those)',
        },
    reruns: { stale: num(reruns.stale), connect: num(reruns.connect), reset: num(reruns.reset) },
    rerunRate: rate(rerunTotal, rerunBefore, seconds),
    errorsByCode,
    errorsSinceReset: { '4xx': num(byStatus['4xx']), '5xx': num(byStatus['5xx']) },
    upstreamFailures: {
      connect: num(upstream.connectFailures),
      reset: num(upstream.resets),
      extprocErrors: num(extproc.errors),
      extprocTimeouts: num(extproc.timeouts),
    },
    tunnels: { upgrade: num(obj(tunnels.upgrade).active), connect: num(obj(tunnels.connect).active) },
    latency,
    latencyWindowS: oldest === undefined ? 0 : (now.at - oldest.at) / 1000,
  };
}

/** One binding row of the table. */
export interface BindingRow {
  readonly key: string;
  readonly address: string;
  readonly expiresInMs: number;
  readonly hits: number;
  /** How many proxy processes hold it (with `--workers N`). */
  readonly processes: number;
}

interface DumpBody {
  readonly bindings?: readonly { key: string; address: string; expiresInMs: number; hits: number }[];
  readonly matched?: number;
}

/**
 * The rows of a `/cache` answer: one process's dump, or the cluster primary's `{workers: [{status, body}]}` merged by
 * key (hits summed, the binding with the most time left shown). `matched`: bindings matching the search in the
 * process that has most.
 */
export function bindingRows(answer: unknown): { readonly rows: BindingRow[]; readonly matched: number } {
  const a = obj(answer);
  const dumps: DumpBody[] = Array.isArray(a.workers) ? (a.workers as unknown[]).map((w) => obj(obj(w).body) as DumpBody) : [a as DumpBody];
  const byKey = new Map<string, BindingRow>();
  let matched = 0;
  for (const d of dumps) {
    matched = Math.max(matched, num(d.matched ?? d.bindings?.length));
    for (const b of d.bindings ?? []) {
      const seen = byKey.get(b.key);
      if (seen === undefined) byKey.set(b.key, { key: b.key, address: b.address, expiresInMs: b.expiresInMs, hits: b.hits, processes: 1 });
      else {
        const newer = b.expiresInMs > seen.expiresInMs;
        byKey.set(b.key, {
          key: b.key,
          address: newer ? b.address : seen.address,
          expiresInMs: Math.max(seen.expiresInMs, b.expiresInMs),
          hits: seen.hits + b.hits,
          processes: seen.processes + 1,
        });
      }
    }
  }
  return { rows: [...byKey.values()].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)), matched };
}

/** A number for display: `—` when unknown, else with the given decimals. */
export function formatNumber(n: number | null, decimals = 0): string {
  if (n === null || !Number.isFinite(n)) return '—';
  return n.toFixed(decimals);
}
