/** The `cache` block of the proxy's `/stats` JSON (a contract shared with the benchmark and tests). */
import { zeroEvictions, type BindingCache, type CacheStats } from './binding-cache.js';

export interface CacheStatsBlock extends CacheStats {
  readonly enabled: boolean;
}

/** `cache` is undefined when the proxy runs with `--actor-cache off`: every counter is then 0. */
export function cacheStatsBlock(cache: BindingCache | undefined): CacheStatsBlock {
  if (cache === undefined) return { enabled: false, hits: 0, misses: 0, entries: 0, evictions: zeroEvictions() };
  return { enabled: true, ...cache.stats() };
}
