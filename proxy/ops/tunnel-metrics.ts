/**
 * Prometheus metrics for upgraded connections and CONNECT tunnels, from their declarations (`TUNNEL_STATS`,
 * tunnel-stats.ts), read from `TunnelStats` when scraped.
 */
import type { Registry } from 'prom-client';
import { registerDeclared } from '../../lib/stats/derive.js';
import { PROXY_METRIC_PREFIX as P } from './metrics.js';
import { TUNNEL_STATS, type TunnelStats } from './tunnel-stats.js';

export function registerTunnelMetrics(registry: Registry, stats: TunnelStats): void {
  registerDeclared(registry, P, TUNNEL_STATS, stats);
}
