/**
 * many-actors: 10,000 actors (workers sized to hold them, e.g. 79 × 160), Zipf-distributed popularity, and a
 * proxy cache smaller than the key space (--cache-max-entries, default 2,000). Shows what the cache buys when it
 * cannot hold everything: hit ratio, ResumeActor calls, LRU evictions.
 */
import { getRequests, type LoadPlan } from '../load.js';
import { createRng, shuffled, zipfSampler, zipfTopShare } from '../sampling.js';
import type { ArmRuntime } from '../stack.js';
import type { ArmResult } from '../types.js';
import { clientSeed, hostsOf } from './plans.js';
import type { Scenario, ScenarioContext } from './scenario.js';
import { steadyArm } from './steady.js';

/** Longer lists than steady: a connection loops over its list, and a short loop would flatten the Zipf tail. */
const ZIPF_LIST_LENGTH = 16_384;

export function zipfPlan(ctx: ScenarioContext, url: string): LoadPlan {
  const { config } = ctx;
  // Popularity rank → actor: a seeded shuffle, so the hottest actors are not simply the first names.
  const hosts = shuffled(hostsOf(config, ctx.actors), createRng(config.seed ^ 0x5eed));
  return {
    urls: [url],
    connections: config.connections,
    requestsFor: (i) => getRequests(hosts, ZIPF_LIST_LENGTH, zipfSampler(hosts.length, config.zipfS, createRng(clientSeed(config, i))), `c${i}-`),
  };
}

async function manyArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult> {
  const { config } = ctx;
  const bound = zipfTopShare(ctx.actors.length, config.zipfS, config.cacheMaxEntries);
  const notes = runtime.spec.cache
    ? [`${ctx.actors.length} actors, Zipf s=${config.zipfS}; cache of ${config.cacheMaxEntries} entries: the hottest ${config.cacheMaxEntries} keys get ${(bound * 100).toFixed(1)}% of requests, an upper bound on the hit ratio of a cache that size`]
    : [`${ctx.actors.length} actors, Zipf s=${config.zipfS}; no cache`];
  return steadyArm(ctx, runtime, zipfPlan(ctx, runtime.url), notes);
}

export const manyActors: Scenario = {
  name: 'many-actors',
  defaultArms: ['A', 'B2', 'C'],
  supportedArms: ['A', 'B1', 'B2', 'C', 'target'],
  async prepare(ctx) {
    if (ctx.stack) {
      ctx.log(`waking ${ctx.actors.length} actors`);
      await ctx.stack.wakeAll(ctx.actors);
    }
  },
  runArm: manyArm,
};
