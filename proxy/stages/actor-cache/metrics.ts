/**
 * The cache's Prometheus metrics (`actor_edge_proxy_cache_…`), registered through lib/prom-metrics.ts. They read the lifetime counters when
 * scraped (so they never go down, whatever `POST /stats/reset` does to `/stats`). Labels are fixed sets (eviction
 * reasons, results), never actor names.
 */
import type { Registry } from 'prom-client';
import { metricPrefix, samplesBy, scrapedCounter, scrapedCounterBy, scrapedGauge } from '../../../lib/prom-metrics.js';
import { COALESCED_RESULTS } from './miss-flights.js';
import { REFRESH_RESULTS } from './refresh-ahead.js';
import { zeroCounts } from './counter-set.js';
import type { CacheParts } from './stats.js';

/** The counts of `names` only, from a record that may hold more. */
function only<N extends string>(names: readonly N[], counts: Readonly<Record<N, number>> | undefined): Record<N, number> {
  const out = zeroCounts(names);
  if (counts !== undefined) for (const n of names) out[n] = counts[n];
  return out;
}

const P = `${metricPrefix('proxy')}cache_`;

export function registerCacheMetrics(registry: Registry, parts: CacheParts): void {
  const { cache, flights, refresh } = parts;
  scrapedCounter(registry, {
    name: `${P}hits_total`,
    help: 'Requests routed from a live actor binding (ext_proc skipped).',
    read: () => cache.lifetimeStats().hits,
  });
  scrapedCounter(registry, {
    name: `${P}misses_total`,
    help: 'Actor requests with no live binding (sent through the resolver, or waiting for another miss of the same actor).',
    read: () => cache.lifetimeStats().misses,
  });
  scrapedCounterBy(registry, {
    name: `${P}evictions_total`,
    help: 'Bindings removed, by reason: stale, connect, reset (a request saw the worker fail), identity (the worker failed certificate verification), worker (another request could not connect to its worker), ttl, lru, admin.',
    labelNames: ['reason'],
    read: () => samplesBy('reason', cache.lifetimeStats().evictions),
  });
  scrapedGauge(registry, { name: `${P}entries`, help: 'Live bindings in the cache.', read: () => cache.size });
  scrapedCounterBy(registry, {
    name: `${P}coalesced_waits_total`,
    help: 'Misses that waited for another request\'s miss of the same actor, by result: hit (went as a hit), alone (ran their own slow path), gone (the client left).',
    labelNames: ['result'],
    read: () => samplesBy('result', only(COALESCED_RESULTS, flights.lifetimeStats())),
  });
  scrapedCounterBy(registry, {
    name: `${P}refreshes_total`,
    help: 'Refresh-ahead exchanges for bindings in use, by result: ok (renewed), failed (left to expire).',
    labelNames: ['result'],
    read: () => samplesBy('result', only(REFRESH_RESULTS, refresh?.lifetimeStats())),
  });
}
