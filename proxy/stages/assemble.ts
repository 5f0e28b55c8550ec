/**
 * The chain's order, decided in one place:
 *   user filters (--filter, in order) → actor-cache (when --actor-cache on) → resolver (ext-proc, or apiserver) → router
 * The router is not a stage: the chain appends it itself, always last.
 */
import { loadUserFilters } from '../chain/load-filters.js';
import type { ProxyStage, StageDeps } from './stage.js';
import { createExtProcStage } from './ext-proc/stage.js';
import { createActorCacheStage, createCacheOffStage } from './actor-cache/stage.js';
import { createApiserverResolverStage } from './apiserver/stage.js';

/** Builds the chain's stages in order from the config. */
export async function assembleStages(deps: StageDeps): Promise<ProxyStage[]> {
  const { config } = deps;
  const stages: ProxyStage[] = [];

  // 1. User filters, in the order given (a reload replaces these, and only these).
  for (const filter of await loadUserFilters(config.filters, { log: deps.log, actorSuffix: config.actorSuffix, timeoutMs: config.filterTimeoutMs, ...(deps.offload === undefined ? {} : { offload: deps.offload }) })) {
    stages.push({ filter, userFilter: true });
  }

  // 3. The resolver of whatever is not routed yet: ext-proc (production) or the apiserver comparison resolver.
  //    Made first: the cache refreshes ahead through it.
  const resolver = config.resolver.kind === 'apiserver' ? createApiserverResolverStage(deps) : createExtProcStage(deps);

  // 2. actor-cache: only when --actor-cache on; with it off the filter is not in the chain at all.
  stages.push(config.cache.enabled ? createActorCacheStage(deps, resolver.revalidator) : createCacheOffStage());
  stages.push(resolver);

  return stages;
}
