/**
 * The cache's Prometheus metrics. They read the lifetime counters when scraped (so they never go down, whatever
 * `POST /stats/reset` does to `/stats`). Labels are fixed sets (eviction reasons, results), never actor names.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { EVICTION_REASONS } from './binding-cache.js';
import { COALESCED_RESULTS } from './miss-flights.js';
import { REFRESH_RESULTS } from './refresh-ahead.js';
import type { CacheParts } from './stats.js';

export function registerCacheMetrics(registry: Registry, parts: CacheParts): void {
  const { cache, flights, refresh } = parts;
  new Counter({
    name: 'actor_cache_hits_total',
    help: 'Requests routed from a live actor binding (ext_proc skipped).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(cache.lifetimeStats().hits);
    },
  });
  new Counter({
    name: 'actor_cache_misses_total',
    help: 'Actor requests with no live binding (sent through the resolver, or waiting for another miss of the same actor).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(cache.lifetimeStats().misses);
    },
  });
  new Counter({
    name: 'actor_cache_evictions_total',
    help: 'Bindings removed, by reason: stale, connect, reset (a request saw the worker fail), worker (another request could not connect to its worker), ttl, lru, admin.',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const { evictions } = cache.lifetimeStats();
      this.reset();
      for (const reason of EVICTION_REASONS) this.inc({ reason }, evictions[reason]);
    },
  });
  new Gauge({
    name: 'actor_cache_entries',
    help: 'Live bindings in the cache.',
    registers: [registry],
    collect() {
      this.set(cache.size);
    },
  });
  new Counter({
    name: 'actor_cache_coalesced_waits_total',
    help: 'Misses that waited for another request\'s miss of the same actor, by result: hit (went as a hit), alone (ran their own slow path), gone (the client left).',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      const s = flights.lifetimeStats();
      this.reset();
      for (const result of COALESCED_RESULTS) this.inc({ result }, s[result]);
    },
  });
  new Counter({
    name: 'actor_cache_refreshes_total',
    help: 'Refresh-ahead exchanges for bindings in use, by result: ok (renewed), failed (left to expire).',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      const s = refresh?.lifetimeStats();
      this.reset();
      for (const result of REFRESH_RESULTS) this.inc({ result }, s?.[result] ?? 0);
    },
  });
}
