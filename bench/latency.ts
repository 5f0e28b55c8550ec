/**
 * Latency recording at microsecond resolution. autocannon's own histogram keeps whole milliseconds, which hides
 * the difference between a 0.2 ms cache hit and a 0.9 ms miss, so the benchmark records every response time
 * itself (a growable Float64Array, sorted once at the end).
 */

export interface LatencySummary {
  readonly count: number;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export class LatencyRecorder {
  private values = new Float64Array(1 << 16);
  private n = 0;

  record(ms: number): void {
    if (this.n === this.values.length) {
      const next = new Float64Array(this.values.length * 2);
      next.set(this.values);
      this.values = next;
    }
    this.values[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  reset(): void {
    this.n = 0;
  }

  summary(): LatencySummary {
    return summarize(this.values.subarray(0, this.n));
  }
}

/** Nearest-rank percentile of an ascending array (p in [0, 100]); 0 for an empty array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  if (p <= 0) return sorted[0] as number;
  if (p >= 100) return sorted[sorted.length - 1] as number;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)] as number;
}

/** Summarizes response times in milliseconds (the input is copied, not changed). */
export function summarize(values: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    meanMs: sorted.length ? sum / sorted.length : 0,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    maxMs: percentile(sorted, 100),
  };
}
