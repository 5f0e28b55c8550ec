/**
 * The actor-cache stage: the filter plus its operational surface (the `/stats` `cache` block, `/cache` admin
 * endpoints, Prometheus metrics, the access log's `cache` field), miss coalescing, and refresh-ahead through the
 * resolver's re-validation (when `--cache-refresh-ahead on` and the resolver has one: ext-proc does). With
 * `--actor-cache off` the proxy uses `createCacheOffStage()` instead, which has no filter.
 */
import type { ProxyStage, StageDeps } from '../stage.js';
import type { Revalidator } from '../revalidator.js';
import { BindingCache } from './binding-cache.js';
import { cacheAdminPlugin } from './admin.js';
import { registerCacheMetrics } from './metrics.js';
import { cacheStatsBlock } from './stats.js';
import { cacheOutcome, createActorCacheFilter } from './filter.js';
import { MissFlights } from './miss-flights.js';
import { REFRESH_AHEAD_FRACTION, RefreshAhead } from './refresh-ahead.js';
import { clusterWorkerChannel, SharedBindings, type BindingChannel } from './shared-bindings.js';

export interface ActorCacheStage extends ProxyStage {
  readonly cache: BindingCache;
}

/** `channel`: how this process shares its bindings with the other workers (default: node:cluster IPC when a worker). */
export function createActorCacheStage(deps: StageDeps, revalidator: Revalidator | undefined, channel: BindingChannel | undefined = clusterWorkerChannel()): ActorCacheStage {
  const { config } = deps;
  const refreshing = config.cache.refreshAhead && revalidator !== undefined;
  const cache = new BindingCache({
    ttlMs: config.cache.ttlMs,
    maxEntries: config.cache.maxEntries,
    refreshAheadFraction: refreshing ? REFRESH_AHEAD_FRACTION : 0,
  });
  // A miss waits for another's flight at most as long as ext_proc may take to answer it.
  const flights = new MissFlights({ waitTimeoutMs: config.extProc.settings.messageTimeoutMs });
  const refresh = refreshing ? new RefreshAhead({ cache, revalidator, log: deps.log }) : undefined;
  const shared = channel === undefined ? undefined : new SharedBindings(cache, channel);
  const parts = { cache, flights, refresh, shared };
  registerCacheMetrics(deps.registry, parts);
  return {
    cache,
    filter: createActorCacheFilter({ cache, actorSuffix: config.actorSuffix, flights, ...(refresh ? { refresh } : {}) }),
    stats: () => ({ cache: cacheStatsBlock(parts) }),
    resetStats: () => {
      shared?.resetStats();
      cache.resetStats();
      flights.resetStats();
      refresh?.resetStats();
    },
    admin: cacheAdminPlugin({ cache }),
    logFields(ctx) {
      const outcome = cacheOutcome(ctx);
      return outcome === undefined ? undefined : { cache: outcome };
    },
    close: () => {
      shared?.close();
      return refresh?.close();
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
