/** The `cache` block of the proxy's `/stats` JSON (a contract shared with the benchmark and tests). */
import { zeroCounts } from './counter-set.js';
import { zeroEvictions, type BindingCache, type CacheStats } from './binding-cache.js';
import { COALESCED_RESULTS, type CoalescedResult, type MissFlights } from './miss-flights.js';
import { REFRESH_RESULTS, type RefreshAhead, type RefreshResult } from './refresh-ahead.js';

/** The cache and the two mechanisms around it, as the stage holds them. */
export interface CacheParts {
  readonly cache: BindingCache;
  readonly flights: MissFlights;
  /** Absent with `--cache-refresh-ahead off` (or a resolver that cannot re-validate). */
  readonly refresh: RefreshAhead | undefined;
}

export interface CacheStatsBlock extends CacheStats {
  readonly enabled: boolean;
  /** Misses that waited for another request's miss of the same actor, and what became of them. */
  readonly coalesced: Readonly<Record<'waits' | CoalescedResult, number>>;
  /** Refresh-ahead exchanges by result, and how many are in flight now. */
  readonly refreshes: Readonly<Record<RefreshResult | 'inFlight', number>> & { readonly enabled: boolean };
  /** hits / (hits + misses), 4 decimals; null before the first lookup. */
  readonly hitRatio: number | null;
}

/** hits / (hits + misses) rounded to 4 decimals; null when there was no lookup. */
export function hitRatio(hits: number, misses: number): number | null {
  const lookups = hits + misses;
  return lookups > 0 ? Math.round((hits / lookups) * 10_000) / 10_000 : null;
}

/** `parts` is undefined when the proxy runs with `--actor-cache off`: every counter is then 0. */
export function cacheStatsBlock(parts: CacheParts | undefined): CacheStatsBlock {
  if (parts === undefined) {
    return {
      enabled: false,
      hits: 0,
      misses: 0,
      entries: 0,
      evictions: zeroEvictions(),
      coalesced: { waits: 0, ...zeroCounts(COALESCED_RESULTS) },
      refreshes: { enabled: false, ...zeroCounts(REFRESH_RESULTS), inFlight: 0 },
      hitRatio: null,
    };
  }
  const { cache, flights, refresh } = parts;
  const counts = cache.stats();
  return {
    enabled: true,
    ...counts,
    coalesced: flights.stats(),
    refreshes: { enabled: refresh !== undefined, ...(refresh?.stats() ?? zeroCounts(REFRESH_RESULTS)), inFlight: refresh?.inFlight ?? 0 },
    hitRatio: hitRatio(counts.hits, counts.misses),
  };
}
