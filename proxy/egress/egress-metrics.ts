/**
 * Prometheus metrics of the egress listener, from their declarations (`EGRESS_STATS`, egress-stats.ts), read from
 * `EgressStats` when scraped.
 */
import type { Registry } from 'prom-client';
import { registerDeclared } from '../../lib/stats/derive.js';
import { PROXY_METRIC_PREFIX as P } from '../ops/metrics.js';
import { EGRESS_STATS, type EgressStats } from './egress-stats.js';

export function registerEgressMetrics(registry: Registry, stats: EgressStats): void {
  registerDeclared(registry, P, EGRESS_STATS, stats);
}
