/**
 * The `--resolver apiserver` stage: the resolver filter (standing where ext-proc stands), the `/stats`
 * `resolver` block, its metric, and closing its control-plane connection at shutdown.
 */
import type { ProxyStage, StageDeps } from '../stage.js';
import { createApiserverResolver } from './resolver.js';
import { formatHostPort } from '../../../lib/address.js';

export function createApiserverResolverStage(deps: StageDeps): ProxyStage {
  const { actorSuffix, resolver: config } = deps.config;
  const resolver = createApiserverResolver({
    apiserver: formatHostPort(config.apiserver.host, config.apiserver.port),
    actorSuffix,
    workerPort: config.workerPort,
    rerunBudgetMs: deps.config.rerunBudgetMs,
    registry: deps.registry,
    ...(deps.overload === undefined ? {} : { shedMiss: () => deps.overload?.shedMiss() }),
  });
  deps.log.info({ apiserver: config.apiserver }, 'resolving cache misses with ResumeActor from the proxy (--resolver apiserver)');
  return {
    filter: resolver.filter,
    stats: () => ({ resolver: resolver.stats() }),
    resetStats: () => resolver.resetStats(),
    close: () => resolver.close(),
  };
}
