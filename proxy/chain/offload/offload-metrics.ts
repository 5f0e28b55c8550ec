/**
 * Prometheus metrics of the filters' worker pool (`actor_edge_proxy_filter_offload_…`): the latency of each
 * offloaded call by where it ran (observed as calls settle), and the tallies and levels read when scraped.
 */
import type { Registry } from 'prom-client';
import { histogram, scrapedCounter, scrapedGauge } from '../../../lib/prom-metrics.js';
import { PROXY_METRIC_PREFIX as P } from '../../ops/metrics.js';
import type { OffloadPoolView } from './offload-stats.js';

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
  scrapedGauge(registry, { name: `${P}filter_offload_backlog`, help: 'Offloaded filter calls waiting for a worker thread now (--filter-backlog bounds them).', read: () => pool.backlog });
  scrapedGauge(registry, { name: `${P}filter_offload_workers`, help: 'Worker threads of the filter pool running now (--filter-workers; 0: no pool).', read: () => pool.workers });
  scrapedCounter(registry, {
    name: `${P}filter_offload_inline_total`,
    help: 'Offloaded filter calls run inline on the event loop: every call with --filter-workers 0, else those that found the queue full.',
    read: () => pool.tallies.calls.inline,
  });
  scrapedCounter(registry, {
    name: `${P}filter_offload_stale_total`,
    help: 'Offloaded filter results dropped because their request no longer waited (the client left, the filter timed out).',
    read: () => pool.tallies.stale,
  });
  scrapedCounter(registry, {
    name: `${P}filter_offload_errors_total`,
    help: 'Offloaded filter calls that threw, or whose worker thread died (each fails its own request: 500).',
    read: () => pool.tallies.errors,
  });
}
