/**
 * The ext-proc stage: the default resolver of cache misses (one ext_proc stream per request it handles), its
 * `/stats` `resolver` block, the background re-validation refresh-ahead uses (one stream per refresh), the
 * health client the readiness check uses (on the same channel), and closing that channel at shutdown.
 */
import { formatHostPort } from '../../../lib/address.js';
import { GrpcExtProcClient } from './grpc-client.js';
import { createExtProcFilter } from './filter.js';
import { createExtProcRevalidator } from './revalidate.js';
import type { ProxyStage, StageDeps } from '../stage.js';
import { RESOLVER_STATS, type ResolverStatsBlock } from '../resolver-stats.js';
import { statsBlock } from '../../../lib/stats/derive.js';
import { EXT_PROC_SLOT } from './request-state.js';
import { StreamQueue } from './stream-queue.js';

export function createExtProcStage(deps: StageDeps): ProxyStage {
  const { address, settings } = deps.config.extProc;
  const client = new GrpcExtProcClient({
    address: formatHostPort(address.host, address.port),
    messageTimeoutMs: settings.messageTimeoutMs,
    maxMessageTimeoutMs: settings.maxMessageTimeoutMs,
    counters: deps.counters,
    tls: deps.config.extProc.tls,
    log: deps.log,
    guard: deps.guard,
  });
  const { maxStreams, queueMaxWaiting, queueTimeoutMs } = deps.config.extProc;
  const overload = deps.overload;
  const queue = overload === undefined || maxStreams === 0 ? undefined : new StreamQueue({ maxStreams, maxWaiting: queueMaxWaiting }, overload.tallies);
  return {
    filter: createExtProcFilter({
      client,
      settings,
      retries: { policy: { budgetMs: deps.config.rerunBudgetMs, maxWaiting: deps.config.extProc.retryMaxWaiting }, counters: deps.counters },
      ...(overload === undefined
        ? {}
        : { admission: { shedMiss: () => overload.shedMiss(), ...(queue === undefined ? {} : { queue }), queueTimeoutMs, budgetMs: deps.config.rerunBudgetMs } }),
    }),
    revalidator: createExtProcRevalidator(client, settings.forwardRules),
    stats: () => ({ resolver: extprocResolverBlock() }),
    logFields: (ctx) => {
      const state = EXT_PROC_SLOT.get(ctx);
      return { extprocMs: state === undefined ? null : Math.round(state.elapsedMs * 1000) / 1000 };
    },
    healthClient: () => client.healthClient(),
    extProcClient: client,
    close: () => client.close(),
  };
}

/** extproc makes the ResumeActor calls: the proxy itself makes none. */
function extprocResolverBlock(): ResolverStatsBlock {
  return statsBlock(RESOLVER_STATS, { kind: 'extproc', tallies: {}, resumeCalls: {} }).resolver;
}
