/**
 * The cache's Prometheus metrics. They read the cache's lifetime counters when scraped (so they never go down,
 * whatever `POST /stats/reset` does to `/stats`). Labels are fixed sets (eviction reasons), never actor names.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { EVICTION_REASONS, type BindingCache } from './binding-cache.js';

export function registerCacheMetrics(registry: Registry, cache: BindingCache): void {
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
    help: 'Actor requests with no live binding (sent through the resolver).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(cache.lifetimeStats().misses);
    },
  });
  new Counter({
    name: 'actor_cache_evictions_total',
    help: 'Bindings removed, by reason: stale, connect, reset (a request saw the worker fail), ttl, lru, admin.',
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
}
