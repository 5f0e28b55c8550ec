/**
 * The last minutes of traffic for the dashboard's charts (`GET /stats/history`): once a second, the change in the
 * lifetime request count and in the request-duration histogram's buckets by cache outcome, kept in a fixed ring (300
 * samples: five minutes). Lifetime counters, so a `/stats/reset` does not disturb it. Buckets rather than quantiles,
 * so a cluster primary can sum its workers' samples (`mergeHistories`) and the page computes p99 from the sums, as
 * Prometheus' `histogram_quantile` would.
 *
 * Cost: one timer per process reading ~130 numbers a second, off the request path; memory bounded by the ring.
 */
import type { CacheLabel } from './metrics.js';

/** The outcomes a sample keeps (`none`: not an actor request, or the cache off; not charted). */
export const HISTORY_OUTCOMES = Object.freeze(['hit', 'miss', 'rerun'] as const);
export type HistoryOutcome = (typeof HISTORY_OUTCOMES)[number];

/** One interval: its end (ms since the epoch, on the interval grid), requests answered, durations by outcome. */
export interface HistorySample {
  readonly at: number;
  readonly requests: number;
  /**
   * Per-bucket counts (not cumulative) in the document's `bounds`, then the count above the highest; trailing zeros
   * left out, an outcome with no request left out.
   */
  readonly latency: Partial<Record<HistoryOutcome, number[]>>;
}

export interface HistoryDocument {
  readonly intervalMs: number;
  readonly capacity: number;
  /** The duration buckets' upper bounds, seconds. */
  readonly bounds: readonly number[];
  /** Oldest first. */
  readonly samples: readonly HistorySample[];
}

/** What the sampler reads: lifetime values only. */
export interface HistorySource {
  requests(): number;
  durationCounts(): Readonly<Record<CacheLabel, readonly number[]>>;
}

export interface HistoryOptions {
  readonly bounds: readonly number[];
  readonly intervalMs?: number;
  readonly capacity?: number;
  readonly now?: () => number;
}

/** The route's line in the admin index. */
export const HISTORY_DESCRIPTION =
  'the last 5 minutes per second: requests and request-duration buckets by cache outcome (lifetime counters, not reset by /stats/reset; JSON; ?since=ms for newer samples only)';

/** `?since=` of `/stats/history`: a number of ms since the epoch, else everything. */
export function sinceParam(text: string | undefined): number {
  const n = Number(text);
  return text === undefined || text === '' || !Number.isFinite(n) ? -Infinity : n;
}

function trimZeros(counts: number[]): number[] {
  let end = counts.length;
  while (end > 0 && counts[end - 1] === 0) end--;
  return counts.slice(0, end);
}

export class StatsHistory {
  readonly intervalMs: number;
  readonly capacity: number;
  readonly #bounds: readonly number[];
  readonly #now: () => number;
  readonly #ring: HistorySample[] = [];
  #previous: { requests: number; durations: Readonly<Record<CacheLabel, readonly number[]>> };
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly source: HistorySource,
    opts: HistoryOptions,
  ) {
    this.intervalMs = opts.intervalMs ?? 1000;
    this.capacity = opts.capacity ?? 300;
    this.#bounds = opts.bounds;
    this.#now = opts.now ?? Date.now;
    this.#previous = this.#read();
  }

  #read(): { requests: number; durations: Readonly<Record<CacheLabel, readonly number[]>> } {
    const durations = this.source.durationCounts();
    return { requests: this.source.requests(), durations: Object.fromEntries(Object.entries(durations).map(([k, v]) => [k, [...v]])) as Record<CacheLabel, number[]> };
  }

  /** Closes the interval ending now: the change since the last call becomes a sample on the interval grid. */
  sample(): void {
    const current = this.#read();
    const latency: Partial<Record<HistoryOutcome, number[]>> = {};
    for (const outcome of HISTORY_OUTCOMES) {
      const before = this.#previous.durations[outcome];
      const delta = trimZeros(current.durations[outcome].map((n, i) => Math.max(0, n - (before[i] ?? 0))));
      if (delta.length > 0) latency[outcome] = delta;
    }
    const at = Math.round(this.#now() / this.intervalMs) * this.intervalMs;
    const requests = Math.max(0, current.requests - this.#previous.requests);
    this.#previous = current;
    const last = this.#ring[this.#ring.length - 1];
    // A late timer can close two intervals on one grid point: they are one sample.
    if (last !== undefined && last.at >= at) {
      this.#ring[this.#ring.length - 1] = mergeSamples(last.at, [last, { at, requests, latency }]);
      return;
    }
    this.#ring.push({ at, requests, latency });
    if (this.#ring.length > this.capacity) this.#ring.shift();
  }

  /** Samples every interval, just after each grid point, until `stop` (the timer keeps no process alive). */
  start(): this {
    const next = (): void => {
      const wait = this.intervalMs - (this.#now() % this.intervalMs) + 5;
      this.#timer = setTimeout(() => {
        this.sample();
        next();
      }, wait);
      this.#timer.unref();
    };
    if (this.#timer === undefined) next();
    return this;
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The ring as a document; `since` (ms): only samples after it. */
  document(since = -Infinity): HistoryDocument {
    return { intervalMs: this.intervalMs, capacity: this.capacity, bounds: this.#bounds, samples: this.#ring.filter((s) => s.at > since) };
  }
}

function addInto(into: number[], counts: readonly number[]): void {
  for (let i = 0; i < counts.length; i++) into[i] = (into[i] ?? 0) + (counts[i] ?? 0);
}

function mergeSamples(at: number, samples: readonly HistorySample[]): HistorySample {
  const latency: Partial<Record<HistoryOutcome, number[]>> = {};
  let requests = 0;
  for (const s of samples) {
    requests += s.requests;
    for (const outcome of HISTORY_OUTCOMES) {
      const counts = s.latency[outcome];
      if (counts !== undefined) addInto((latency[outcome] ??= []), counts);
    }
  }
  return { at, requests, latency };
}

/**
 * The cluster primary's `/stats/history`: its workers' documents summed grid point by grid point (a worker with no
 * sample at a point adds nothing), at most `capacity` samples.
 */
export function mergeHistories(docs: readonly HistoryDocument[]): HistoryDocument {
  const first = docs[0];
  if (first === undefined) return { intervalMs: 1000, capacity: 0, bounds: [], samples: [] };
  const byAt = new Map<number, HistorySample[]>();
  for (const d of docs) for (const s of d.samples) byAt.set(s.at, [...(byAt.get(s.at) ?? []), s]);
  const samples = [...byAt].sort(([a], [b]) => a - b).map(([at, list]) => mergeSamples(at, list));
  return { intervalMs: first.intervalMs, capacity: first.capacity, bounds: first.bounds, samples: samples.slice(-first.capacity) };
}
