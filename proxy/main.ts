/**
 * `actor-edge proxy`: reads the config, assembles the chain, and runs one proxy process (`--workers 1`) or a
 * node:cluster primary with N ingress workers sharing the listener.
 *
 * Chain order (assembleStages below is the one place it is decided):
 *   user filters (--filter, in order) → actor-cache (when --actor-cache on) → resolver (ext-proc, or apiserver) → router
 */
import cluster from 'node:cluster';
import { formatHelp } from '../lib/flags.js';
import { createLogger } from '../lib/logger.js';
import { PROXY_FLAGS, readProxyConfig } from './config.js';
import { loadUserFilters } from './chain/load-filters.js';
import { startProxyProcess } from './proxy-process.js';
import { runClusterPrimary, runClusterWorker } from './cluster.js';
import type { ProxyStage, StageDeps } from './chain/stage.js';
import { createExtProcStage } from './stages/ext-proc/stage.js';
import { createActorCacheStage, createCacheOffStage } from './stages/actor-cache/stage.js';
import { createApiserverResolverStage } from './stages/apiserver/stage.js';

const SUMMARY =
  'The ingress proxy: user filters, then actor-cache (cache-first actor bindings), then ext_proc (one stream per miss), then the router.';

/** Builds the chain's stages in order. The router is appended by the chain itself, always last. */
export async function assembleStages(deps: StageDeps): Promise<ProxyStage[]> {
  const { config } = deps;
  const stages: ProxyStage[] = [];

  // 1. User filters, in the order given.
  for (const filter of await loadUserFilters(config.filters, deps.log, config.actorSuffix)) stages.push({ filter });

  // 2. actor-cache: only when --actor-cache on; with it off the filter is not in the chain at all.
  stages.push(config.actorCache ? createActorCacheStage(deps) : createCacheOffStage());

  // 3. The resolver of whatever is not routed yet: ext-proc (production) or the apiserver comparison resolver.
  stages.push(config.resolver === 'apiserver' ? createApiserverResolverStage(deps) : createExtProcStage(deps));

  return stages;
}

export async function main(argv: string[]): Promise<void> {
  const { help, config } = readProxyConfig(argv);
  if (help || config === undefined) {
    process.stdout.write(formatHelp('proxy', SUMMARY, PROXY_FLAGS));
    return;
  }
  if (cluster.isWorker) {
    await runClusterWorker(config, assembleStages);
    return;
  }
  if (config.workers > 1) {
    await runClusterPrimary(config, createLogger('proxy'));
    return;
  }
  await startProxyProcess(config, assembleStages, { role: 'standalone' });
}
