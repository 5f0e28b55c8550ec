/**
 * The actor cache's counters, declared once (lib/stats/declare.ts): `CACHE_STATS` is the `cache` block of the
 * proxy's `/stats` JSON, its `actor_edge_proxy_cache_…` metrics, and the counters' storage. Each counter is a tally:
 * the binding table, the miss flights, refresh-ahead and the shared bindings each bump their part of
 * `cacheTallies()` (`tallies.hits++`, `tallies.coalesced.waits++`), so a new counter is its declaration and its
 * `++`. Labels are fixed sets (eviction reasons, results), never actor names.
 */
import { declare, talliesOf, tallyAt, type StatsOf, type TalliesOf } from '../../../lib/stats/declare.js';

/**
 * What the declarations read: the tallies as `{ cache: … }` (since the last reset for `/stats`, lifetime for
 * `/metrics`) and the levels and settings now.
 */
export interface CacheView {
  readonly enabled: boolean;
  readonly tallies: object;
  readonly entries: number;
  readonly refreshEnabled: boolean;
  readonly refreshesInFlight: number;
  readonly sharedEnabled: boolean;
}

/** hits / (hits + misses) rounded to 4 decimals; null when there was no lookup. */
export function hitRatio(hits: number, misses: number): number | null {
  const lookups = hits + misses;
  return lookups > 0 ? Math.round((hits / lookups) * 10_000) / 10_000 : null;
}

const COALESCED = {
  kind: 'tally',
  name: 'cache_coalesced_waits_total',
  help: "Misses that waited for another request's miss of the same actor, by result: hit (went as a hit), alone (ran their own slow path), gone (the client left).",
} as const;

const REFRESHES = {
  kind: 'tally',
  name: 'cache_refreshes_total',
  help: 'Refresh-ahead exchanges for bindings in use, by result: ok (renewed), failed (left to expire).',
} as const;

/** The `cache` block of `/stats` (also with `--actor-cache off`, every count 0). */
export const CACHE_STATS = declare<CacheView>()({
  cache: {
    enabled: { kind: 'stat', help: 'Whether the actor cache is on (--actor-cache).', read: (v) => v.enabled },
    hits: { kind: 'tally', help: 'Requests routed from a live actor binding (ext_proc skipped).' },
    misses: {
      kind: 'tally',
      help: 'Actor requests with no live binding (sent through the resolver, or waiting for another miss of the same actor).',
    },
    entries: { kind: 'gauge', help: 'Live bindings in the cache.', read: (v) => v.entries },
    evictions: {
      kind: 'tally',
      label: 'reason',
      keys: ['stale', 'connect', 'reset', 'identity', 'worker', 'ttl', 'lru', 'admin'] as const,
      help: 'Bindings removed, by reason: stale, connect, reset (a request saw the worker fail), identity (the worker failed certificate verification), worker (another request could not connect to its worker), ttl, lru, admin.',
    },
    coalesced: {
      waits: { kind: 'tally', exported: false, help: "Misses that waited for another request's miss of the same actor (the sum of the results)." },
      hit: { ...COALESCED, labels: { result: 'hit' } },
      alone: { ...COALESCED, labels: { result: 'alone' } },
      gone: { ...COALESCED, labels: { result: 'gone' } },
    },
    refreshes: {
      enabled: { kind: 'stat', help: 'Whether bindings in use are refreshed ahead of their expiry (--cache-refresh-ahead, and a resolver that re-validates).', read: (v) => v.refreshEnabled },
      ok: { ...REFRESHES, labels: { result: 'ok' } },
      failed: { ...REFRESHES, labels: { result: 'failed' } },
      inFlight: { kind: 'stat', help: 'Refresh-ahead exchanges in flight now.', read: (v) => v.refreshesInFlight },
    },
    hitRatio: { kind: 'stat', help: 'hits / (hits + misses), 4 decimals; null before the first lookup.', read: (v) => hitRatio(tallyAt(v, ['cache', 'hits']), tallyAt(v, ['cache', 'misses'])) },
  },
});

/** The `cache` block of a cache that is on: `CACHE_STATS` and the bindings shared with the other cluster workers. */
export const CACHE_ON_STATS = declare<CacheView>()({
  cache: {
    ...CACHE_STATS.cache,
    shared: {
      enabled: { kind: 'stat', help: 'Whether this process shares its bindings with the other workers (--workers N).', read: (v) => v.sharedEnabled },
      sent: { kind: 'tally', exported: false, help: 'Binding events (learned, evicted) this process sent to the other workers.' },
      received: { kind: 'tally', exported: false, help: 'Binding events the other workers sent to this process.' },
      adopted: { kind: 'tally', exported: false, help: 'Learned bindings of other workers this process took into its cache.' },
      dropped: { kind: 'tally', exported: false, help: 'Bindings this process removed because another worker evicted them.' },
      ignored: { kind: 'tally', exported: false, help: 'Events of other workers that changed nothing here (an older generation, or a binding already gone).' },
    },
  },
});

export type CacheStatsBlock = StatsOf<typeof CACHE_STATS>['cache'] & Partial<Pick<StatsOf<typeof CACHE_ON_STATS>['cache'], 'shared'>>;

/** The cache's tallies, one per tally of `CACHE_ON_STATS` at its path below `cache` (each part bumps its own). */
export type CacheTallies = TalliesOf<typeof CACHE_ON_STATS>['cache'];

/** Zeroed tallies of the cache (each part takes its own: the binding table the top-level ones, `coalesced`, `refreshes`, `shared`). */
export function cacheTallies(): CacheTallies {
  return talliesOf(CACHE_ON_STATS).cache;
}

/** The binding table's own tallies: hits, misses, evictions by reason (the cache block's numbers outside its sub-blocks). */
export type LookupTallies = Omit<CacheTallies, 'coalesced' | 'refreshes' | 'shared'>;

export function lookupTallies(): LookupTallies {
  const { coalesced: _coalesced, refreshes: _refreshes, shared: _shared, ...own } = cacheTallies();
  return own;
}

