/**
 * The actor cache's counters, declared once (lib/stats/declare.ts): the `cache` block of the proxy's `/stats` JSON
 * and its `actor_edge_proxy_cache_…` metrics both derive from `CACHE_STATS`. Labels are fixed sets (eviction
 * reasons, results), never actor names.
 */
import { declare, type StatsOf } from '../../../lib/stats/declare.js';
import { statsBlock, type StatsSource } from '../../../lib/stats/derive.js';
import { zeroCounts } from './counter-set.js';
import { zeroEvictions, type BindingCache, type CacheStats } from './binding-cache.js';
import { COALESCED_RESULTS, type CoalescedResult, type MissFlights } from './miss-flights.js';
import { REFRESH_RESULTS, type RefreshAhead, type RefreshResult } from './refresh-ahead.js';
import { SHARED_COUNTS, type SharedBindings, type SharedCount } from './shared-bindings.js';

/** The cache and the mechanisms around it, as the stage holds them. */
export interface CacheParts {
  readonly cache: BindingCache;
  readonly flights: MissFlights;
  /** Absent with `--cache-refresh-ahead off` (or a resolver that cannot re-validate). */
  readonly refresh: RefreshAhead | undefined;
  /** Absent when the process shares its bindings with no other (not a cluster worker). */
  readonly shared?: SharedBindings | undefined;
}

/** What the declarations read: the counts (since the last reset, or lifetime) and the levels now. */
export interface CacheView {
  readonly enabled: boolean;
  readonly counts: CacheStats;
  readonly coalesced: Readonly<Record<'waits' | CoalescedResult, number>>;
  readonly refreshEnabled: boolean;
  readonly refreshes: Readonly<Record<RefreshResult, number>>;
  readonly refreshesInFlight: number;
  readonly sharedEnabled: boolean;
  readonly shared: Readonly<Record<SharedCount, number>>;
}

/** hits / (hits + misses) rounded to 4 decimals; null when there was no lookup. */
export function hitRatio(hits: number, misses: number): number | null {
  const lookups = hits + misses;
  return lookups > 0 ? Math.round((hits / lookups) * 10_000) / 10_000 : null;
}

const COALESCED = {
  kind: 'counter',
  name: 'cache_coalesced_waits_total',
  help: "Misses that waited for another request's miss of the same actor, by result: hit (went as a hit), alone (ran their own slow path), gone (the client left).",
} as const;

const REFRESHES = {
  kind: 'counter',
  name: 'cache_refreshes_total',
  help: 'Refresh-ahead exchanges for bindings in use, by result: ok (renewed), failed (left to expire).',
} as const;

/** The `cache` block of `/stats` (also with `--actor-cache off`, every count 0). */
export const CACHE_STATS = declare<CacheView>()({
  cache: {
    enabled: { kind: 'stat', help: 'Whether the actor cache is on (--actor-cache).', read: (v) => v.enabled },
    hits: { kind: 'counter', help: 'Requests routed from a live actor binding (ext_proc skipped).', read: (v) => v.counts.hits },
    misses: {
      kind: 'counter',
      help: 'Actor requests with no live binding (sent through the resolver, or waiting for another miss of the same actor).',
      read: (v) => v.counts.misses,
    },
    entries: { kind: 'gauge', help: 'Live bindings in the cache.', read: (v) => v.counts.entries },
    evictions: {
      kind: 'counter',
      label: 'reason',
      help: 'Bindings removed, by reason: stale, connect, reset (a request saw the worker fail), identity (the worker failed certificate verification), worker (another request could not connect to its worker), ttl, lru, admin.',
      read: (v) => v.counts.evictions,
    },
    coalesced: {
      waits: { kind: 'stat', help: "Misses that waited for another request's miss of the same actor (the sum of the results).", read: (v) => v.coalesced.waits },
      hit: { ...COALESCED, labels: { result: 'hit' }, read: (v) => v.coalesced.hit },
      alone: { ...COALESCED, labels: { result: 'alone' }, read: (v) => v.coalesced.alone },
      gone: { ...COALESCED, labels: { result: 'gone' }, read: (v) => v.coalesced.gone },
    },
    refreshes: {
      enabled: { kind: 'stat', help: 'Whether bindings in use are refreshed ahead of their expiry (--cache-refresh-ahead, and a resolver that re-validates).', read: (v) => v.refreshEnabled },
      ok: { ...REFRESHES, labels: { result: 'ok' }, read: (v) => v.refreshes.ok },
      failed: { ...REFRESHES, labels: { result: 'failed' }, read: (v) => v.refreshes.failed },
      inFlight: { kind: 'stat', help: 'Refresh-ahead exchanges in flight now.', read: (v) => v.refreshesInFlight },
    },
    hitRatio: { kind: 'stat', help: 'hits / (hits + misses), 4 decimals; null before the first lookup.', read: (v) => hitRatio(v.counts.hits, v.counts.misses) },
  },
});

/** The `cache` block of a cache that is on: `CACHE_STATS` and the bindings shared with the other cluster workers. */
export const CACHE_ON_STATS = declare<CacheView>()({
  cache: {
    ...CACHE_STATS.cache,
    shared: {
      enabled: { kind: 'stat', help: 'Whether this process shares its bindings with the other workers (--workers N).', read: (v) => v.sharedEnabled },
      sent: { kind: 'stat', help: 'Binding events (learned, evicted) this process sent to the other workers.', read: (v) => v.shared.sent },
      received: { kind: 'stat', help: 'Binding events the other workers sent to this process.', read: (v) => v.shared.received },
      adopted: { kind: 'stat', help: 'Learned bindings of other workers this process took into its cache.', read: (v) => v.shared.adopted },
      dropped: { kind: 'stat', help: 'Bindings this process removed because another worker evicted them.', read: (v) => v.shared.dropped },
      ignored: { kind: 'stat', help: 'Events of other workers that changed nothing here (an older generation, or a binding already gone).', read: (v) => v.shared.ignored },
    },
  },
});

export type CacheStatsBlock = StatsOf<typeof CACHE_STATS>['cache'] & Partial<Pick<StatsOf<typeof CACHE_ON_STATS>['cache'], 'shared'>>;

const OFF: CacheView = {
  enabled: false,
  counts: { hits: 0, misses: 0, entries: 0, evictions: zeroEvictions() },
  coalesced: { waits: 0, ...zeroCounts(COALESCED_RESULTS) },
  refreshEnabled: false,
  refreshes: zeroCounts(REFRESH_RESULTS),
  refreshesInFlight: 0,
  sharedEnabled: false,
  shared: zeroCounts(SHARED_COUNTS),
};

/** The two views of a cache that is on. */
export function cacheSource(parts: CacheParts): StatsSource<CacheView> {
  const { cache, flights, refresh, shared } = parts;
  const view = (lifetime: boolean): CacheView => ({
    enabled: true,
    counts: lifetime ? cache.lifetimeStats() : cache.stats(),
    coalesced: lifetime ? flights.lifetimeStats() : flights.stats(),
    refreshEnabled: refresh !== undefined,
    refreshes: (lifetime ? refresh?.lifetimeStats() : refresh?.stats()) ?? zeroCounts(REFRESH_RESULTS),
    refreshesInFlight: refresh?.inFlight ?? 0,
    sharedEnabled: shared !== undefined,
    shared: shared?.stats() ?? zeroCounts(SHARED_COUNTS),
  });
  return { sinceReset: () => view(false), lifetime: () => view(true) };
}

/** `parts` is undefined when the proxy runs with `--actor-cache off`: every counter is then 0. */
export function cacheStatsBlock(parts: CacheParts | undefined): CacheStatsBlock {
  return parts === undefined ? statsBlock(CACHE_STATS, OFF).cache : statsBlock(CACHE_ON_STATS, cacheSource(parts).sinceReset()).cache;
}
