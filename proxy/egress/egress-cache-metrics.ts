/**
 * The egress verdict cache's Prometheus metrics (`actor_edge_proxy_egress_cache_…`), from their declarations
 * (`EGRESS_CACHE_STATS`, egress-cache-counters.ts). They read the lifetime counters when scraped (so they never go
 * down, whatever `POST /stats/reset` does to `/stats`).
 */
import type { Registry } from 'prom-client';
import { metricPrefix } from '../../lib/prom-metrics.js';
import { registerDeclared } from '../../lib/stats/derive.js';
import { EGRESS_CACHE_STATS, egressCacheSource, type EgressCacheParts } from './egress-cache-stats.js';

export function registerEgressCacheMetrics(registry: Registry, parts: EgressCacheParts): void {
  registerDeclared(registry, metricPrefix('proxy'), EGRESS_CACHE_STATS, egressCacheSource(parts));
}
