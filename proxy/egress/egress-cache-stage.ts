/**
 * The egress cache stage: what the egress listener asks (`decider`) and the operational surface around it (the
 * `/stats` block `egress.cache`, the `/cache/egress` and `/egress/revoke` admin routes, the
 * `actor_edge_proxy_egress_cache_…` metrics),
 * with the verdict table shared across the processes of a `--workers` cluster, and the signals that tell the egress
 * listener's grants of fresher verdicts and revocations (`grant-signals.ts`). It has no filter: it is not part of
 * the ingress chain; the proxy process lists it with its stages so that its stats, admin routes and shutdown are
 * handled as theirs are.
 */
import type { Registry } from 'prom-client';
import { clusterWorkerChannel } from '../../lib/cluster-channel.js';
import type { ProxyStage } from '../stages/stage.js';
import type { EgressCacheConfig } from './egress-cache-config.js';
import { egressCacheAdminPlugin } from './egress-cache-admin.js';
import { egressRevokeAdminPlugin } from './egress-revoke-admin.js';
import { registerEgressCacheMetrics } from './egress-cache-metrics.js';
import { egressCacheStatsBlock, type EgressCacheStatsBlock } from './egress-cache-stats.js';
import { cachedDecider, DecisionTallies, uncachedDecider, type EgressDecider } from './egress-decider.js';
import { GrantSignals } from './grant-signals.js';
import { isEgressVerdictMessage, SharedVerdicts, type VerdictChannel } from './shared-verdicts.js';
import { EgressVerdictCache } from './verdict-cache.js';

export type { EgressDecider, EgressCacheUse } from './egress-decider.js';

export interface EgressStageDeps {
  /** This process's prom-client registry. */
  readonly registry: Registry;
  /**
   * How this process shares its verdicts with the other workers: default the node:cluster IPC channel when this is
   * a cluster worker (none otherwise); `null`: not shared.
   */
  readonly channel?: VerdictChannel | null;
  /** The cache's clock (tests); default `Date.now`. */
  readonly now?: () => number;
}

export interface EgressStage extends ProxyStage {
  /** What the egress listener calls for each CONNECT whose certificate passed its checks. */
  readonly decider: EgressDecider;
  /** The verdict table; undefined with `--egress-cache off`. */
  readonly cache: EgressVerdictCache | undefined;
  /** What the egress listener's grants hear (fresher verdicts, revocations), and where a revoke is made. */
  readonly signals: GrantSignals;
  /** The `egress.cache` block alone (for a caller composing a wider `egress` block). */
  cacheStats(): EgressCacheStatsBlock;
  stats(): { readonly egress: { readonly cache: EgressCacheStatsBlock } };
  resetStats(): void;
  close(): void;
}

export function createEgressStage(config: EgressCacheConfig, deps: EgressStageDeps): EgressStage {
  const tallies = new DecisionTallies();
  const cache = config.enabled ? new EgressVerdictCache({ maxEntries: config.maxEntries, ttlMs: config.ttlMs, ...(deps.now === undefined ? {} : { now: deps.now }) }) : undefined;
  const channel = deps.channel === undefined ? clusterWorkerChannel(isEgressVerdictMessage) : (deps.channel ?? undefined);
  const signals = new GrantSignals(cache);
  const shared = cache === undefined || channel === undefined ? undefined : new SharedVerdicts(cache, channel, signals);
  const parts = { cache, shared, tallies };
  registerEgressCacheMetrics(deps.registry, parts);
  const cacheStats = (): EgressCacheStatsBlock => egressCacheStatsBlock(parts);
  return {
    decider: cache === undefined ? uncachedDecider(tallies, { ttlMs: config.ttlMs, news: signals, ...(deps.now === undefined ? {} : { now: deps.now }) }) : cachedDecider(cache, tallies, signals),
    cache,
    signals,
    cacheStats,
    stats: () => ({ egress: { cache: cacheStats() } }),
    resetStats: () => {
      cache?.resetStats();
      shared?.resetStats();
      tallies.resetStats();
    },
    admin: async (app) => {
      await app.register(egressCacheAdminPlugin({ cache }));
      await app.register(egressRevokeAdminPlugin({ revoke: (filter) => signals.revoke(filter, 'revoked-admin') }));
    },
    close: () => shared?.close(),
  };
}
