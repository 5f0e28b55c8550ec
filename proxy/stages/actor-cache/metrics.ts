/**
 * The cache's Prometheus metrics (`actor_edge_proxy_cache_…`), from their declarations (`CACHE_STATS`, counters.ts).
 * They read the lifetime counters when scraped (so they never go down, whatever `POST /stats/reset` does to
 * `/stats`).
 */
import type { Registry } from 'prom-client';
import { metricPrefix } from '../../../lib/prom-metrics.js';
import { registerDeclared } from '../../../lib/stats/derive.js';
import { CACHE_STATS, cacheSource, type CacheParts } from './stats.js';

export function registerCacheMetrics(registry: Registry, parts: CacheParts): void {
  registerDeclared(registry, metricPrefix('proxy'), CACHE_STATS, cacheSource(parts));
}
