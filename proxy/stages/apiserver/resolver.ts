/**
 * Builds the `--resolver apiserver` resolver: one control-plane client (one HTTP/2 connection), the shared
 * per-actor flights (no parking, the same resume budget as extproc's default), the filter, and its counters
 * (ResumeActor calls by gRPC code, for the `resolver` block of `/stats`).
 */
import type { Registry } from 'prom-client';
import { metricPrefix } from '../../../lib/prom-metrics.js';
import { SinceReset } from '../../../lib/since-reset.js';
import { registerDeclared, statsBlock } from '../../../lib/stats/derive.js';
import { createControlClient, resumeActorOnce } from '../../../lib/resume/control-client.js';
import { DEFAULT_RESUME_BUDGET_MS, grpcCodeName } from '../../../lib/wire-contract.js';
import { ResumeFlights } from '../../../lib/resume/flight.js';
import type { Filter } from '../../api/filter.js';
import { createApiserverResolverFilter, type ResolverContext } from './filter.js';
import { RESOLVER_STATS, resolverTallies, type ResolverStatsBlock } from '../resolver-stats.js';

export interface ApiserverResolverOptions {
  /** Control plane gRPC `host:port`. */
  readonly apiserver: string;
  readonly actorSuffix: string;
  readonly workerPort: number;
  readonly budgetMs?: number;
  /** The request's re-run budget: a resume is retried for a request only while a retry can start within it. */
  readonly rerunBudgetMs?: number;
  readonly registry?: Registry;
  /** The overload manager: why a miss is shed now (503 `PROXY_ERR_OVERLOADED`), or undefined. */
  readonly shedMiss?: () => string | undefined;
}

export interface ApiserverResolver {
  readonly filter: Filter<ResolverContext>;
  stats(): ResolverStatsBlock;
  resetStats(): void;
  close(): void;
}

export function createApiserverResolver(opts: ApiserverResolverOptions): ApiserverResolver {
  const budgetMs = opts.budgetMs ?? DEFAULT_RESUME_BUDGET_MS;
  const client = createControlClient(opts.apiserver);
  // Lifetime tallies (the metric), and /stats since the last reset.
  const tallies = resolverTallies();
  const resumeCalls: Record<string, number> = {};
  const sinceReset = new SinceReset(() => ({ tallies, resumeCalls }));
  if (opts.registry !== undefined) {
    registerDeclared(opts.registry, metricPrefix('proxy'), RESOLVER_STATS, { lifetime: () => ({ kind: 'apiserver' as const, tallies: { resolver: tallies }, resumeCalls }) });
  }
  const flights = new ResumeFlights({
    attempt: (ref) => resumeActorOnce(client, ref, budgetMs),
    budgetMs,
    observer: {
      attempt(result) {
        const code = result.kind === 'ok' ? 'OK' : grpcCodeName(result.code);
        resumeCalls[code] = (resumeCalls[code] ?? 0) + 1;
      },
      join() {
        tallies.flightJoins++;
      },
    },
  });
  return {
    filter: createApiserverResolverFilter({
      flights,
      actorSuffix: opts.actorSuffix,
      workerPort: opts.workerPort,
      ...(opts.rerunBudgetMs === undefined ? {} : { rerunBudgetMs: opts.rerunBudgetMs }),
      ...(opts.shedMiss === undefined ? {} : { shedMiss: opts.shedMiss }),
    }),
    stats: () => {
      const d = sinceReset.current();
      // A code not seen since the reset is left out, as before the first call.
      const seen = Object.fromEntries(Object.entries(d.resumeCalls).filter(([, n]) => n !== 0));
      return statsBlock(RESOLVER_STATS, { kind: 'apiserver' as const, tallies: { resolver: d.tallies }, resumeCalls: seen }).resolver;
    },
    resetStats: () => sinceReset.reset(),
    close: () => client.close(),
  };
}
