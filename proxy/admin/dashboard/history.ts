/**
 * The dashboard's charts, computed from `/stats/history` (proxy/ops/stats-history.ts: per-second requests and
 * request-duration buckets by cache outcome, summed over the workers by a cluster primary): the points of each chart
 * and the SVG path that draws them. Pure functions, no DOM: served to the browser as it is (`/dashboard/history.js`)
 * and tested in node.
 */
import { quantile, type Histogram } from './model.js';

/** `/stats/history` as the page keeps it. */
export interface HistoryDoc {
  readonly intervalMs: number;
  readonly capacity: number;
  readonly bounds: readonly number[];
  readonly samples: readonly HistorySampleDoc[];
}

export interface HistorySampleDoc {
  readonly at: number;
  readonly requests: number;
  readonly latency: Readonly<Record<string, readonly number[] | undefined>>;
}

/** One point of the charts. */
export interface HistoryPoint {
  readonly at: number;
  readonly rate: number;
  /** hit / (hit + miss + rerun) requests of the interval; null with none. */
  readonly hitRatio: number | null;
  /** p99 of the trailing window (`P99_WINDOW` samples), ms; null with no request of that outcome in it. */
  readonly p99HitMs: number | null;
  readonly p99MissMs: number | null;
}

/** Samples p99 is computed over: a second alone holds too few misses for a p99. */
export const P99_WINDOW = 5;

function isNumbers(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((n) => typeof n === 'number' && Number.isFinite(n));
}

/** A `/stats/history` answer read defensively; undefined when it is not one. */
export function readHistory(v: unknown): HistoryDoc | undefined {
  const d = (v ?? {}) as Partial<Record<keyof HistoryDoc, unknown>>;
  if (typeof d.intervalMs !== 'number' || d.intervalMs <= 0 || typeof d.capacity !== 'number' || !isNumbers(d.bounds) || !Array.isArray(d.samples)) return undefined;
  const samples = (d.samples as unknown[]).flatMap((s): HistorySampleDoc[] => {
    const x = (s ?? {}) as Record<string, unknown>;
    if (typeof x.at !== 'number' || typeof x.requests !== 'number') return [];
    const latency: Record<string, number[]> = {};
    for (const [k, counts] of Object.entries((x.latency ?? {}) as Record<string, unknown>)) if (isNumbers(counts)) latency[k] = counts;
    return [{ at: x.at, requests: x.requests, latency }];
  });
  return { intervalMs: d.intervalMs, capacity: d.capacity, bounds: d.bounds, samples };
}

/** `kept` with `fresh`'s samples added (a sample at the same time replaced: a primary's late worker), the newest `capacity`. */
export function mergeHistory(kept: HistoryDoc | undefined, fresh: HistoryDoc): HistoryDoc {
  const byAt = new Map((kept?.samples ?? []).map((s) => [s.at, s]));
  for (const s of fresh.samples) byAt.set(s.at, s);
  const samples = [...byAt.values()].sort((a, b) => a.at - b.at).slice(-fresh.capacity);
  return { ...fresh, samples };
}

function histogramOf(bounds: readonly number[], counts: readonly number[]): Histogram {
  const all = [...bounds, Infinity];
  let running = 0;
  const cumulative = all.map((_b, i) => (running += counts[i] ?? 0));
  return { bounds: all, cumulative, count: running, sum: 0 };
}

function total(counts: readonly number[] | undefined): number {
  return (counts ?? []).reduce((a, n) => a + n, 0);
}

function p99Ms(doc: HistoryDoc, window: readonly HistorySampleDoc[], outcome: string): number | null {
  const sum: number[] = [];
  for (const s of window) (s.latency[outcome] ?? []).forEach((n, i) => (sum[i] = (sum[i] ?? 0) + n));
  const q = quantile(0.99, histogramOf(doc.bounds, sum));
  return q === null ? null : q * 1000;
}

/** The charts' points, one per sample. */
export function historyPoints(doc: HistoryDoc): HistoryPoint[] {
  const { samples, intervalMs } = doc;
  return samples.map((s, i) => {
    const window = samples.slice(Math.max(0, i - P99_WINDOW + 1), i + 1).filter((w) => w.at > s.at - P99_WINDOW * intervalMs);
    const hits = total(s.latency.hit);
    const lookups = hits + total(s.latency.miss) + total(s.latency.rerun);
    return {
      at: s.at,
      rate: s.requests / (intervalMs / 1000),
      hitRatio: lookups === 0 ? null : hits / lookups,
      p99HitMs: p99Ms(doc, window, 'hit'),
      p99MissMs: p99Ms(doc, window, 'miss'),
    };
  });
}

/** 1, 2 or 5 times a power of ten, at least `v` (a chart's top). */
export function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 5, 10].find((m) => m * p >= v * (1 - 1e-9)) ?? 10) * p;
}

/** Where a chart's points go: the time span (ms) along x, 0 … `yMax` up y, in a `width` × `height` box. */
export interface ChartBox {
  readonly from: number;
  readonly to: number;
  readonly yMax: number;
  /** With it, y is on a log scale from `yMin` (> 0) to `yMax` (latencies: a hit's 0.3 ms beside a miss's 30 ms). */
  readonly yMin?: number;
  readonly width: number;
  readonly height: number;
  /** Points further apart than this (ms) are not joined (no sample in between: the process was not running). */
  readonly gapMs: number;
}

/**
 * An SVG path through the points (`M x,y L x,y …`): a null value or a gap breaks the line; a point alone is a short
 * dash, so that one second of traffic still shows.
 */
export function linePath(points: readonly { readonly at: number; readonly value: number | null }[], box: ChartBox): string {
  const span = Math.max(1, box.to - box.from);
  const x = (at: number): number => ((at - box.from) / span) * box.width;
  const { yMin, yMax } = box;
  const share = yMin === undefined ? (v: number) => v / yMax : (v: number) => Math.log(Math.max(v, yMin) / yMin) / Math.log(yMax / yMin);
  const y = (v: number): number => box.height - Math.min(1, Math.max(0, share(v))) * box.height;
  const runs: { x: number; y: number }[][] = [];
  let run: { x: number; y: number }[] = [];
  let lastAt = -Infinity;
  for (const p of points) {
    if (p.value === null || p.at - lastAt > box.gapMs) {
      if (run.length > 0) runs.push(run);
      run = [];
    }
    if (p.value !== null) run.push({ x: x(p.at), y: y(p.value) });
    lastAt = p.at;
  }
  if (run.length > 0) runs.push(run);
  const f = (n: number): string => String(Math.round(n * 10) / 10);
  return runs
    .map((r) => (r.length === 1 ? [{ x: (r[0]?.x ?? 0) - 2, y: r[0]?.y ?? 0 }, { x: (r[0]?.x ?? 0) + 2, y: r[0]?.y ?? 0 }] : r))
    .map((r) => r.map((p, i) => `${i === 0 ? 'M' : 'L'}${f(p.x)},${f(p.y)}`).join(' '))
    .join(' ');
}
