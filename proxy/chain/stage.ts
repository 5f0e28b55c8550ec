/**
 * Built-in chain stages (actor-cache, the ext-proc or apiserver resolver) are a filter plus their operational
 * surface: `/stats` blocks, admin endpoints, Prometheus metrics, access-log fields, and shutdown.
 * `chain/assemble.ts` builds them from the config in chain order; user `--filter` modules are plain filters.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Filter } from '../api/filter.js';
import type { StageContext } from '../request/stage-context.js';
import type { ProxyConfig } from '../config.js';
import type { Counters } from '../ops/stats.js';
import type { Revalidator } from '../stages/revalidator.js';

/** What a stage factory receives. */
export interface StageDeps {
  readonly config: ProxyConfig;
  readonly log: Logger;
  /** This process's prom-client registry: register metrics here (fixed label values only, never client names). */
  readonly registry: Registry;
  /** The proxy's request-path counters (ext_proc streams, upstream, re-runs). */
  readonly counters: Counters;
}

export interface ProxyStage {
  /**
   * The stage's filter (built-in stages use their typed slots on the context); absent for a stage that only
   * contributes its operational surface (e.g. `/cache` answering 404 when the cache is off).
   */
  readonly filter?: Filter<StageContext>;
  /** A `--filter` module (not a built-in stage): bounded by `--filter-timeout-ms`, replaced by a reload. */
  readonly userFilter?: boolean;
  /** A resolver stage's background re-validation of one actor (refresh-ahead uses it; ext-proc has one). */
  readonly revalidator?: Revalidator;
  /** Top-level blocks merged into `/stats`, e.g. `{ cache: {...} }` or `{ resolver: {...} }`. */
  stats?(): Readonly<Record<string, unknown>>;
  /** `POST /stats/reset`. */
  resetStats?(): void;
  /** Admin endpoints (a fastify plugin registered on the admin server of the process that owns the stage). */
  readonly admin?: FastifyPluginAsync;
  /** Extra fields for a request's access-log line (called only when the access log is on). */
  logFields?(ctx: StageContext): Readonly<Record<string, unknown>> | undefined;
  /** Called once at shutdown, after in-flight requests finished. */
  close?(): Promise<void> | void;
}
