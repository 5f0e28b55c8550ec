/**
 * Prometheus metrics of the budgets and the overload manager, from their declarations (`OVERLOAD_STATS`, counters.ts),
 * read from their tallies and levels when scraped (docs/operating.md).
 */
import type { Registry } from 'prom-client';
import { registerDeclared } from '../../../lib/stats/derive.js';
import { PROXY_METRIC_PREFIX as P } from '../metrics.js';
import { OVERLOAD_STATS, overloadLifetime, type OverloadSources } from './stats.js';

export function registerOverloadMetrics(registry: Registry, s: OverloadSources): void {
  registerDeclared(registry, P, OVERLOAD_STATS, { lifetime: () => overloadLifetime(s) });
}
