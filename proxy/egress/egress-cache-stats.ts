/** The `egress.cache` block of the proxy's `/stats` JSON. */
import { zeroCounts } from '../stages/actor-cache/counter-set.js';
import { hitRatio } from '../stages/actor-cache/stats.js';
import { zeroNotCached, type DecisionTallies, type VerdictOutcome } from './egress-decider.js';
import { SHARED_VERDICT_COUNTS, type SharedVerdictCount, type SharedVerdicts } from './shared-verdicts.js';
import { EVICTION_REASONS, VERDICT_COUNTS, type EgressVerdictCache, type EvictionReason, type VerdictCount } from './verdict-cache.js';

/** The cache (undefined with `--egress-cache off`), its sharing (undefined when not a cluster worker), the decider's tallies. */
export interface EgressCacheParts {
  readonly cache: EgressVerdictCache | undefined;
  readonly shared: SharedVerdicts | undefined;
  readonly tallies: DecisionTallies;
}

export type EgressCacheStatsBlock = Readonly<Record<VerdictCount, number>> & {
  readonly enabled: boolean;
  /**
   * `hits`: CONNECTs answered from a live verdict; `misses`: those that found none (`joined` of them shared another
   * one's slow path); `slowPaths`: slow paths run (every CONNECT with the cache off); `failed`: slow paths that
   * rejected; `stored`: verdicts stored; `notCached`: verdicts a slow path gave that were not stored, by outcome;
   * `expired`: verdicts met or swept after their expiry.
   */
  readonly slowPaths: number;
  readonly failed: number;
  readonly notCached: Readonly<Record<VerdictOutcome, number>>;
  readonly evictions: Readonly<Record<EvictionReason, number>>;
  readonly entries: number;
  /** Slow paths in flight now (with the cache on, one per key at most). */
  readonly inFlight: number;
  /** hits / (hits + misses), 4 decimals; null before the first lookup. */
  readonly hitRatio: number | null;
  readonly shared: Readonly<Record<SharedVerdictCount, number>> & { readonly enabled: boolean };
};

export function egressCacheStatsBlock(parts: EgressCacheParts): EgressCacheStatsBlock {
  const { cache, shared, tallies } = parts;
  const counts = cache?.stats() ?? { ...zeroCounts(VERDICT_COUNTS), evictions: zeroCounts(EVICTION_REASONS) };
  const decisions = tallies.stats();
  return {
    enabled: cache !== undefined,
    hits: counts.hits,
    misses: counts.misses,
    joined: counts.joined,
    slowPaths: decisions.slowPaths,
    failed: decisions.failed,
    stored: counts.stored,
    notCached: cache === undefined ? zeroNotCached() : decisions.notCached,
    evictions: counts.evictions,
    expired: counts.expired,
    entries: cache?.size ?? 0,
    inFlight: tallies.active,
    hitRatio: hitRatio(counts.hits, counts.misses),
    shared: { enabled: shared !== undefined, ...(shared?.stats() ?? zeroCounts(SHARED_VERDICT_COUNTS)) },
  };
}
