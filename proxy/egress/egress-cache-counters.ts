/**
 * The egress verdict cache's counters, declared once (lib/stats/declare.ts): `EGRESS_CACHE_STATS` is the
 * `egress.cache` block of the proxy's `/stats` JSON, its `actor_edge_proxy_egress_cache_…` metrics, and the
 * counters' storage. Each counter is a tally: the verdict cache, the decider and the shared verdicts each bump their
 * part of `egressCacheTallies()`, so a new counter is its declaration and its `++`. Labels are fixed sets
 * (outcomes, reasons), never actor names or destinations. With `--egress-cache off` they exist too: every one is 0
 * but `slowPaths` and `failed`.
 */
import { declare, talliesOf, tallyAt, type StatsOf, type TalliesOf } from '../../lib/stats/declare.js';
import { EGRESS_OUTCOMES, type EgressOutcome } from '../../lib/egress/wire.js';
import { hitRatio } from '../stages/actor-cache/counters.js';

/** A verdict's outcome as a fixed label: the contract's outcomes (`allowed` for an allow), else `other`. */
export type VerdictOutcome = EgressOutcome | 'other';
export const VERDICT_OUTCOMES: readonly VerdictOutcome[] = Object.freeze([...(Object.keys(EGRESS_OUTCOMES) as EgressOutcome[]), 'other']);

/** What a process tells the others about its verdicts, and what it did with theirs (`shared-verdicts.ts`). */
export type SharedVerdictCount = 'sent' | 'received' | 'adopted' | 'ignored' | 'evictions' | 'dropped';

/**
 * What the declarations read: the tallies as `{ egress: { cache: … } }` (since the last reset, or lifetime) and
 * the levels now.
 */
export interface EgressCacheView {
  readonly enabled: boolean;
  readonly tallies: object;
  readonly entries: number;
  readonly inFlight: number;
  readonly sharedEnabled: boolean;
}

const SHARED_HELP: Readonly<Record<SharedVerdictCount, string>> = {
  sent: 'Verdict messages (stores, evictions) this process sent to the other workers.',
  received: 'Verdict messages the other workers sent to this process.',
  adopted: "Received stores taken into this process's cache.",
  ignored: 'Received stores ignored: older than what is held, expired, or covered by an eviction heard before them.',
  evictions: 'Received evictions applied here.',
  dropped: 'Verdicts the received evictions removed.',
};

const sharedCount = (count: SharedVerdictCount) => ({ kind: 'tally', exported: false, help: SHARED_HELP[count] }) as const;

/** The `egress.cache` block of `/stats`. */
export const EGRESS_CACHE_STATS = declare<EgressCacheView>()({
  egress: {
    cache: {
      enabled: { kind: 'stat', help: 'Whether the egress verdict cache is on (--egress-cache).', read: (v) => v.enabled },
      hits: { kind: 'tally', help: 'Egress CONNECTs answered from a live cached verdict (the slow path skipped).' },
      misses: {
        kind: 'tally',
        help: "Egress CONNECTs that found no live verdict (they ran the slow path, or joined another CONNECT's for the same certificate and destination).",
      },
      joined: { kind: 'tally', help: 'Egress misses that shared a slow path already in flight for the same key.' },
      slowPaths: { kind: 'tally', help: 'Egress slow paths run (ext_proc exchanges); with the cache off, one per CONNECT.' },
      failed: {
        kind: 'tally',
        help: 'Egress slow paths that failed (their error went to every CONNECT that shared them; nothing cached).',
      },
      stored: { kind: 'tally', help: 'Egress verdicts stored by this process.' },
      notCached: {
        kind: 'tally',
        label: 'outcome',
        keys: VERDICT_OUTCOMES,
        help: 'Egress verdicts a slow path gave that were not stored, by outcome (allowed or denied ones: the certificate expired, or an eviction matched the key while the slow path ran).',
      },
      evictions: {
        kind: 'tally',
        label: 'reason',
        keys: ['admin', 'peer', 'lru', 'revoked'] as const,
        help: "Egress verdicts removed before they expired, by reason: admin (this process's admin), peer (another process's eviction), lru (the entry bound), revoked (its actor found not running or unknown while this process held tunnels of its certificate).",
      },
      expired: { kind: 'tally', help: "Egress verdicts removed after their expiry (the TTL or the certificate's NotAfter)." },
      entries: { kind: 'gauge', help: 'Live egress verdicts in the cache.', read: (v) => v.entries },
      inFlight: {
        kind: 'gauge',
        name: 'egress_cache_slow_paths_active',
        help: 'Egress slow paths in flight now (with the cache on, one per key at most).',
        read: (v) => v.inFlight,
      },
      hitRatio: { kind: 'stat', help: 'hits / (hits + misses), 4 decimals; null before the first lookup.', read: (v) => hitRatio(tallyAt(v, ['egress', 'cache', 'hits']), tallyAt(v, ['egress', 'cache', 'misses'])) },
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

/** The egress cache's tallies, one per tally of `EGRESS_CACHE_STATS` at its path below `egress.cache`. */
export type EgressCacheTallies = TalliesOf<typeof EGRESS_CACHE_STATS>['egress']['cache'];

/** Zeroed tallies of the egress cache (each part takes its own). */
export function egressCacheTallies(): EgressCacheTallies {
  return talliesOf(EGRESS_CACHE_STATS).egress.cache;
}

/** The decider's own tallies: slow paths run and failed, verdicts a slow path gave that were not cached. */
export type DecisionCounts = Pick<EgressCacheTallies, 'slowPaths' | 'failed' | 'notCached'>;

/** The verdict cache's own tallies: every one of the block's but the decider's and the shared verdicts'. */
export type VerdictCounts = Omit<EgressCacheTallies, keyof DecisionCounts | 'shared'>;

export function decisionCounts(): DecisionCounts {
  const { slowPaths, failed, notCached } = egressCacheTallies();
  return { slowPaths, failed, notCached };
}

export function verdictCounts(): VerdictCounts {
  const { slowPaths: _slowPaths, failed: _failed, notCached: _notCached, shared: _shared, ...own } = egressCacheTallies();
  return own;
}
