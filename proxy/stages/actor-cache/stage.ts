/**
 * The actor-cache stage: the filter plus its operational surface (the `/stats` `cache` block, `/cache` admin
 * endpoints, Prometheus metrics, the access log's `cache` field). With `--actor-cache off` the proxy uses
 * `createCacheOffStage()` instead, which has no filter.
 */
import type { ProxyStage, StageDeps } from '../../chain/stage.js';
import { BindingCache } from './binding-cache.js';
import { cacheAdminPlugin } from './admin.js';
import { registerCacheMetrics } from './metrics.js';
import { cacheStatsBlock } from './stats.js';
import { cacheOutcome, createActorCacheFilter } from './filter.js';

export interface ActorCacheStage extends ProxyStage {
  readonly cache: BindingCache;
}

export function createActorCacheStage(deps: StageDeps): ActorCacheStage {
  const { config } = deps;
  const cache = new BindingCache({ ttlMs: config.cacheTtlMs, maxEntries: config.cacheMaxEntries });
  registerCacheMetrics(deps.registry, cache);
  return {
    cache,
    filter: createActorCacheFilter({ cache, actorSuffix: config.actorSuffix }),
    stats: () => ({ cache: cacheStatsBlock(cache) }),
    resetStats: () => cache.resetStats(),
    admin: cacheAdminPlugin({ cache }),
    logFields(ctx) {
      const outcome = cacheOutcome(ctx);
      return outcome === undefined ? undefined : { cache: outcome };
    },
  };
}

/**
 * With `--actor-cache off`: no filter (the chain is exactly the path without a cache), `/stats` reports
 * `cache.enabled: false`, and the `/cache` endpoints answer 404 "actor cache disabled".
 */
export function createCacheOffStage(): ProxyStage {
  return {
    stats: () => ({ cache: cacheStatsBlock(undefined) }),
    admin: cacheAdminPlugin({ cache: undefined }),
  };
}
