/**
 * Built-in chain stages (actor-cache, the ext-proc or apiserver resolver) are a filter plus their operational
 * surface: `/stats` blocks, admin endpoints, Prometheus metrics, access-log fields, and shutdown.
 * `assemble.ts` builds them from their config slices in chain order; user `--filter` modules are plain filters.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { ChainFilter } from '../chain/filter-set.js';
import type { FilterSpec } from '../chain/load-filters.js';
import type { ProxyRequest } from '../request/context.js';
import type { ProxyContainment } from '../ops/containment.js';
import type { Counters } from '../ops/stats.js';
import type { OverloadManager } from '../ops/overload/manager.js';
import type { OffloadPool } from '../chain/offload/offload-pool.js';
import type { HealthClient } from '../../lib/grpc-health.js';
import type { Revalidator } from './revalidator.js';
import type { CacheConfig } from './actor-cache/config.js';
import type { ExtProcStageConfig } from './ext-proc/config.js';
import type { ExtProcClient } from './ext-proc/client.js';
import type { ResolverConfig } from './apiserver/config.js';

/** Everything the stages are configured with. */
export interface StagesConfig {
  /** Normalised DNS suffix under which hosts name actors. */
  readonly actorSuffix: string;
  /** User filters in chain order. */
  readonly filters: readonly FilterSpec[];
  /** `--filter-timeout-ms`: a filter module's import and factory are bounded by it too. */
  readonly filterTimeoutMs: number;
  /**
   * `--rerun-budget-ms`: the request's one budget. Its re-runs start within it, and so do the slow path's retries
   * during an outage: ext_proc streams that could not be opened, and resumes the resolver retries (extproc is sent
   * what is left of it).
   */
  readonly rerunBudgetMs: number;
  readonly cache: CacheConfig;
  readonly extProc: ExtProcStageConfig;
  /** Who resolves what the cache did not route: ext_proc (production) or the benchmark's apiserver resolver. */
  readonly resolver: ResolverConfig;
}

/** What a stage factory receives. */
export interface StageDeps {
  readonly config: StagesConfig;
  readonly log: Logger;
  /** This process's prom-client registry: register metrics here (fixed label values only, never client names). */
  readonly registry: Registry;
  /** The proxy's request-path counters (ext_proc streams, upstream, re-runs). */
  readonly counters: Counters;
  /** The containment boundary (`ops/containment.ts`), for the work a stage starts on a peer's input. */
  readonly guard?: ProxyContainment | undefined;
  /**
   * The overload manager (`ops/overload/`): a resolver stage sheds its misses through it (`shedMiss`) and counts its
   * queue in its tallies. Absent: nothing is shed, misses are not bounded.
   */
  readonly overload?: OverloadManager;
  /** The filters' worker pool (`--filter-workers`): user filter modules' `offload` exports run on it. */
  readonly offload?: OffloadPool;
}

export interface ProxyStage {
  /**
   * The stage's filter (built-in stages keep their per-request state in their own slots); absent for a stage that
   * only contributes its operational surface (e.g. `/cache` answering 404 when the cache is off).
   */
  readonly filter?: ChainFilter;
  /** A `--filter` module (not a built-in stage): bounded by `--filter-timeout-ms`, replaced by a reload. */
  readonly userFilter?: boolean;
  /** A resolver stage's background re-validation of one actor (refresh-ahead uses it; ext-proc has one). */
  readonly revalidator?: Revalidator;
  /**
   * A resolver stage's gRPC health client on the channel its requests use now, credentials included (the
   * readiness check asks it before every check, so it checks that very connection, also after a rotation).
   */
  readonly healthClient?: () => HealthClient;
  /** A resolver stage's ext_proc client: the egress listener opens its streams on the same channel. */
  readonly extProcClient?: ExtProcClient;
  /** Top-level blocks merged into `/stats`, e.g. `{ cache: {...} }` or `{ resolver: {...} }`. */
  stats?(): Readonly<Record<string, unknown>>;
  /** `POST /stats/reset`. */
  resetStats?(): void;
  /** Admin endpoints (a fastify plugin registered on the admin server of the process that owns the stage). */
  readonly admin?: FastifyPluginAsync;
  /** Extra fields for a request's access-log line (called only when the access log is on). */
  logFields?(ctx: ProxyRequest): Readonly<Record<string, unknown>> | undefined;
  /** Called once at shutdown, after in-flight requests finished. */
  close?(): Promise<void> | void;
}
