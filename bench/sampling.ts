/**
 * Seeded random numbers and key samplers for the load generator. Every request list the benchmark builds comes
 * from here, so two runs with the same seed send the same sequence of actors.
 */

/** A seeded PRNG (mulberry32): returns floats in [0, 1). */
export function createRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks an index in [0, n) with every index equally likely. */
export function uniformSampler(n: number, rng: () => number): () => number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`uniformSampler: n must be a positive integer, got ${n}`);
  return () => Math.min(n - 1, Math.floor(rng() * n));
}

/**
 * Zipf-distributed indexes in [0, n): P(k) ∝ 1 / (k + 1)^s, so index 0 is the hottest key. Precomputes the
 * cumulative distribution once (O(n)) and samples by binary search (O(log n)).
 */
export function zipfSampler(n: number, s: number, rng: () => number): () => number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`zipfSampler: n must be a positive integer, got ${n}`);
  if (!(s >= 0) || !Number.isFinite(s)) throw new RangeError(`zipfSampler: exponent must be a finite number >= 0, got ${s}`);
  const cdf = zipfCdf(n, s);
  return () => {
    const u = rng();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cdf[mid] as number) > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
}

/** The cumulative Zipf distribution over n keys with exponent s (last element exactly 1). */
export function zipfCdf(n: number, s: number): Float64Array {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) {
    sum += 1 / Math.pow(k + 1, s);
    cdf[k] = sum;
  }
  for (let k = 0; k < n; k++) cdf[k] = (cdf[k] as number) / sum;
  cdf[n - 1] = 1;
  return cdf;
}

/**
 * The share of requests that go to the `top` hottest of n Zipf keys: an upper bound on the hit ratio an LRU cache
 * of `top` entries can reach when every entry stays fresh (TTL expiry and misses lower it).
 */
export function zipfTopShare(n: number, s: number, top: number): number {
  if (top <= 0) return 0;
  if (top >= n) return 1;
  return zipfCdf(n, s)[top - 1] as number;
}

/** Fisher-Yates shuffle of a copy. */
export function shuffled<T>(items: readonly T[], rng: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    const t = out[i] as T;
    out[i] = out[j] as T;
    out[j] = t;
  }
  return out;
}
