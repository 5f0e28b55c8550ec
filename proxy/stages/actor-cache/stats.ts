/** The `cache` block of the proxy's `/stats` JSON (a contract shared with the benchmark and tests). */
import type { BindingCache, CacheStats } from './binding-cache.js';

export interface CacheStatsBlock extends CacheStats {
  readonly enabled: boolean;
}

const ZERO: CacheStats = { hits: 0, misses: 0, entries: 0, evictions: { stale: 0, connect: 0, reset: 0, ttl: 0, lru: 0, admin: 0 } };

/** `cache` is undefined when the proxy runs with `--actor-cache off`: every counter is then 0. */
export function cacheStatsBlock(cache: BindingCache | undefined): CacheStatsBlock {
  return { enabled: cache !== undefined, ...(cache?.stats() ?? ZERO) };
}
