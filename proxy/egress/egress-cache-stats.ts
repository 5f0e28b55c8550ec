/**
 * The egress verdict cache's counters, declared once (lib/stats/declare.ts): the `egress.cache` block of the
 * proxy's `/stats` JSON and its `actor_edge_proxy_egress_cache_…` metrics both derive from `EGRESS_CACHE_STATS`.
 * Labels are fixed sets (outcomes, reasons), never actor names or destinations. With `--egress-cache off` they exist
 * too: every one is 0 but `slowPaths`.
 */
import { declare, type StatsOf } from '../../lib/stats/declare.js';
import { statsBlock, type StatsSource } from '../../lib/stats/derive.js';
import { zeroCounts } from '../stages/actor-cache/counter-set.js';
import { hitRatio } from '../stages/actor-cache/stats.js';
import { zeroNotCached, type DecisionTallies } from './egress-decider.js';
import { SHARED_VERDICT_COUNTS, type SharedVerdictCount, type SharedVerdicts } from './shared-verdicts.js';
import { EVICTION_REASONS, VERDICT_COUNTS, type EgressVerdictCache } from './verdict-cache.js';

/** The cache (undefined with `--egress-cache off`), its sharing (undefined when not a cluster worker), the decider's tallies. */
export interface EgressCacheParts {
  readonly cache: EgressVerdictCache | undefined;
  readonly shared: SharedVerdicts | undefined;
  readonly tallies: DecisionTallies;
}

/** What the declarations read: the counts (since the last reset, or lifetime) and the levels now. */
export interface EgressCacheView {
  readonly enabled: boolean;
  readonly counts: ReturnType<EgressVerdictCache['stats']>;
  readonly decisions: ReturnType<DecisionTallies['stats']>;
  readonly entries: number;
  readonly inFlight: number;
  readonly sharedEnabled: boolean;
  readonly shared: Readonly<Record<SharedVerdictCount, number>>;
}

const SHARED_HELP: Readonly<Record<SharedVerdictCount, string>> = {
  sent: 'Verdict messages (stores, evictions) this process sent to the other workers.',
  received: 'Verdict messages the other workers sent to this process.',
  adopted: "Received stores taken into this process's cache.",
  ignored: 'Received stores ignored: older than what is held, expired, or covered by an eviction heard before them.',
  evictions: 'Received evictions applied here.',
  dropped: 'Verdicts the received evictions removed.',
};

const sharedCount = (count: SharedVerdictCount) => ({ kind: 'stat', help: SHARED_HELP[count], read: (v: EgressCacheView) => v.shared[count] }) as const;

/** The `egress.cache` block of `/stats`. */
export const EGRESS_CACHE_STATS = declare<EgressCacheView>()({
  egress: {
    cache: {
      enabled: { kind: 'stat', help: 'Whether the egress verdict cache is on (--egress-cache).', read: (v) => v.enabled },
      hits: { kind: 'counter', help: 'Egress CONNECTs answered from a live cached verdict (the slow path skipped).', read: (v) => v.counts.hits },
      misses: {
        kind: 'counter',
        help: "Egress CONNECTs that found no live verdict (they ran the slow path, or joined another CONNECT's for the same certificate and destination).",
        read: (v) => v.counts.misses,
      },
      joined: { kind: 'counter', help: 'Egress misses that shared a slow path already in flight for the same key.', read: (v) => v.counts.joined },
      slowPaths: { kind: 'counter', help: 'Egress slow paths run (ext_proc exchanges); with the cache off, one per CONNECT.', read: (v) => v.decisions.slowPaths },
      failed: {
        kind: 'counter',
        help: 'Egress slow paths that failed (their error went to every CONNECT that shared them; nothing cached).',
        read: (v) => v.decisions.failed,
      },
      stored: { kind: 'counter', help: 'Egress verdicts stored by this process.', read: (v) => v.counts.stored },
      notCached: {
        kind: 'counter',
        label: 'outcome',
        help: 'Egress verdicts a slow path gave that were not stored, by outcome (allowed or denied ones: the certificate expired, or an eviction matched the key while the slow path ran).',
        read: (v) => (v.enabled ? v.decisions.notCached : zeroNotCached()),
      },
      evictions: {
        kind: 'counter',
        label: 'reason',
        help: "Egress verdicts removed before they expired, by reason: admin (this process's admin), peer (another process's eviction), lru (the entry bound), revoked (its actor found not running or unknown while this process held tunnels of its certificate).",
        read: (v) => v.counts.evictions,
      },
      expired: { kind: 'counter', help: "Egress verdicts removed after their expiry (the TTL or the certificate's NotAfter).", read: (v) => v.counts.expired },
      entries: { kind: 'gauge', help: 'Live egress verdicts in the cache.', read: (v) => v.entries },
      inFlight: {
        kind: 'gauge',
        name: 'egress_cache_slow_paths_active',
        help: 'Egress slow paths in flight now (with the cache on, one per key at most).',
        read: (v) => v.inFlight,
      },
      hitRatio: { kind: 'stat', help: 'hits / (hits + misses), 4 decimals; null before the first lookup.', read: (v) => hitRatio(v.counts.hits, v.counts.misses) },
      shared: {
        enabled: { kind: 'stat', help: 'Whether this process shares its verdicts with the other workers (--workers N).', read: (v) => v.sharedEnabled },
        sent: sharedCount('sent'),
        received: sharedCount('received'),
        adopted: sharedCount('adopted'),
        ignored: sharedCount('ignored'),
        evictions: sharedCount('evictions'),
        dropped: sharedCount('dropped'),
      },
    },
  },
});

export type EgressCacheStatsBlock = StatsOf<typeof EGRESS_CACHE_STATS>['egress']['cache'];

/** The two views of the egress cache's parts. */
export function egressCacheSource(parts: EgressCacheParts): StatsSource<EgressCacheView> {
  const { cache, shared, tallies } = parts;
  const view = (lifetime: boolean): EgressCacheView => ({
    enabled: cache !== undefined,
    counts: (lifetime ? cache?.lifetimeStats() : cache?.stats()) ?? { ...zeroCounts(VERDICT_COUNTS), evictions: zeroCounts(EVICTION_REASONS) },
    decisions: lifetime ? tallies.lifetimeStats() : tallies.stats(),
    entries: cache?.size ?? 0,
    inFlight: tallies.active,
    sharedEnabled: shared !== undefined,
    shared: shared?.stats() ?? zeroCounts(SHARED_VERDICT_COUNTS),
  });
  return { sinceReset: () => view(false), lifetime: () => view(true) };
}

export function egressCacheStatsBlock(parts: EgressCacheParts): EgressCacheStatsBlock {
  return statsBlock(EGRESS_CACHE_STATS, egressCacheSource(parts).sinceReset()).egress.cache;
}
