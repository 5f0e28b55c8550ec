/**
 * The egress verdict cache's `/stats` block and metrics (`EGRESS_CACHE_STATS`, declared in egress-cache-counters.ts),
 * read from its parts: each keeps its tallies and their view since the last reset; `egressCacheSource` puts them
 * together as the declarations read them.
 */
import { statsBlock, type StatsSource } from '../../lib/stats/derive.js';
import { EGRESS_CACHE_STATS, egressCacheTallies, type EgressCacheStatsBlock, type EgressCacheTallies, type EgressCacheView } from './egress-cache-counters.js';
import type { DecisionTallies } from './egress-decider.js';
import type { SharedVerdicts } from './shared-verdicts.js';
import type { EgressVerdictCache } from './verdict-cache.js';

export { EGRESS_CACHE_STATS, type EgressCacheStatsBlock, type EgressCacheView } from './egress-cache-counters.js';

/** The cache (undefined with `--egress-cache off`), its sharing (undefined when not a cluster worker), the decider's tallies. */
export interface EgressCacheParts {
  readonly cache: EgressVerdictCache | undefined;
  readonly shared: SharedVerdicts | undefined;
  readonly tallies: DecisionTallies;
}

const ZERO: EgressCacheTallies = egressCacheTallies();

/** The two views of the egress cache's parts. */
export function egressCacheSource(parts: EgressCacheParts): StatsSource<EgressCacheView> {
  const { cache, shared, tallies } = parts;
  const view = (lifetime: boolean): EgressCacheView => {
    const decisions = lifetime ? tallies.lifetimeStats() : tallies.stats();
    return {
      enabled: cache !== undefined,
      tallies: {
        egress: {
          cache: {
            ...((lifetime ? cache?.lifetimeStats() : cache?.stats()) ?? ZERO),
            ...decisions,
            // Verdicts not cached are counted only with a cache to store them in.
            notCached: cache === undefined ? ZERO.notCached : decisions.notCached,
            shared: shared?.stats() ?? ZERO.shared,
          },
        },
      },
      entries: cache?.size ?? 0,
      inFlight: tallies.active,
      sharedEnabled: shared !== undefined,
    };
  };
  return { sinceReset: () => view(false), lifetime: () => view(true) };
}

export function egressCacheStatsBlock(parts: EgressCacheParts): EgressCacheStatsBlock {
  return statsBlock(EGRESS_CACHE_STATS, egressCacheSource(parts).sinceReset()).egress.cache;
}
