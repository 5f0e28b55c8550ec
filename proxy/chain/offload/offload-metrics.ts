/**
 * Prometheus metrics of the filters' worker pool (`actor_edge_proxy_filter_offload_…`): the latency of each
 * offloaded call by where it ran (observed as calls settle), and the tallies and levels from their declarations
 * (`OFFLOAD_STATS`), read when scraped.
 */
import type { Registry } from 'prom-client';
import { histogram } from '../../../lib/prom-metrics.js';
import { registerDeclared } from '../../../lib/stats/derive.js';
import { PROXY_METRIC_PREFIX as P } from '../../ops/metrics.js';
import { OFFLOAD_STATS, offloadLifetime, type OffloadPoolView } from './offload-stats.js';

/** 50 µs (an inline call of a cheap function) … 10 s (a call that waited out a long queue). */
export const OFFLOAD_LATENCY_BUCKETS = Object.freeze([0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]);

export function registerOffloadMetrics(registry: Registry, pool: OffloadPoolView): void {
  const latency = histogram(registry, {
    name: `${P}filter_offload_latency_seconds`,
    help: 'Offloaded filter calls, from the call to its result (queue wait included), by where they ran: pool (a worker thread) or inline (the event loop: no pool, or its queue was full).',
    labelNames: ['path'],
    buckets: OFFLOAD_LATENCY_BUCKETS,
  });
  const series = { pool: latency.labels({ path: 'pool' }), inline: latency.labels({ path: 'inline' }) };
  pool.tallies.observeLatency = (path, seconds) => series[path].observe(seconds);
  registerDeclared(registry, P, OFFLOAD_STATS, { lifetime: () => offloadLifetime(pool) });
}
