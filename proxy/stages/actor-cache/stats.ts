/**
 * The actor cache's `/stats` block and metrics, read from the cache and the mechanisms around it: each part keeps
 * its tallies (declared in counters.ts) and their view since the last reset; `cacheSource` puts them together as
 * `CACHE_STATS` reads them.
 */
import { statsBlock, type StatsSource } from '../../../lib/stats/derive.js';
import type { BindingCache } from './binding-cache.js';
import type { MissFlights } from './miss-flights.js';
import type { RefreshAhead } from './refresh-ahead.js';
import type { SharedBindings } from './shared-bindings.js';
import { CACHE_ON_STATS, CACHE_STATS, cacheTallies, type CacheStatsBlock, type CacheTallies, type CacheView } from './counters.js';

export { CACHE_ON_STATS, CACHE_STATS, hitRatio, type CacheStatsBlock } from './counters.js';

/** The cache and the mechanisms around it, as the stage holds them. */
export interface CacheParts {
  readonly cache: BindingCache;
  readonly flights: MissFlights;
  /** Absent with `--cache-refresh-ahead off` (or a resolver that cannot re-validate). */
  readonly refresh: RefreshAhead | undefined;
  /** Absent when the process shares its bindings with no other (not a cluster worker). */
  readonly shared?: SharedBindings | undefined;
}

const ZERO: CacheTallies = cacheTallies();

const OFF: CacheView = {
  enabled: false,
  tallies: { cache: ZERO },
  entries: 0,
  refreshEnabled: false,
  refreshesInFlight: 0,
  sharedEnabled: false,
};

/** The two views of a cache that is on. */
export function cacheSource(parts: CacheParts): StatsSource<CacheView> {
  const { cache, flights, refresh, shared } = parts;
  const view = (lifetime: boolean): CacheView => ({
    enabled: true,
    tallies: {
      cache: {
        ...(lifetime ? cache.lifetimeStats() : cache.stats()),
        coalesced: lifetime ? flights.lifetimeStats() : flights.stats(),
        refreshes: (lifetime ? refresh?.lifetimeStats() : refresh?.stats()) ?? ZERO.refreshes,
        shared: shared?.stats() ?? ZERO.shared,
      },
    },
    entries: cache.size,
    refreshEnabled: refresh !== undefined,
    refreshesInFlight: refresh?.inFlight ?? 0,
    sharedEnabled: shared !== undefined,
  });
  return { sinceReset: () => view(false), lifetime: () => view(true) };
}

/** `parts` is undefined when the proxy runs with `--actor-cache off`: every counter is then 0. */
export function cacheStatsBlock(parts: CacheParts | undefined): CacheStatsBlock {
  return parts === undefined ? statsBlock(CACHE_STATS, OFF).cache : statsBlock(CACHE_ON_STATS, cacheSource(parts).sinceReset()).cache;
}
