/**
 * The admin server (fastify, its own listener): the common ops routes (lib/ops-routes.ts): `GET /`, `/live`,
 * `/ready` (503 `NOT_READY` while the resolver does not answer its health check or the proxy is overloaded,
 * `DRAINING` while draining, with the reason), `GET /stats` (the JSON contract), `POST /stats/reset` (answers the fresh `/stats`), `GET /metrics`
 * (Prometheus text); `GET /upstreams` (attempts and failures per worker); `POST /filters/reload`
 * (`chain/reload.ts`: 200 with the new filters, or the reason the old ones stay: 422 `CONFIG_INVALID`, 500
 * `FILTER_LOAD_FAILED`); `GET /stats/history` (the dashboard's charts: `ops/stats-history.ts`), `GET /dashboard` (`dashboard/`); plus whatever the built-in stages add (the cache's
 * `/cache` endpoints). Every call but a GET passes the admin guard and is logged with the caller's address.
 */
import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import { createAdminApp } from '../../lib/admin-app.js';
import type { Registry } from 'prom-client';
import { processStats, resetProcessStats } from '../../lib/process-stats.js';
import { registerOpsRoutes } from '../../lib/ops-routes.js';
import { guardAdmin } from '../../lib/admin-guard.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { readinessReport } from '../../lib/readiness.js';
import type { ReadinessCheck } from '../../lib/health-probe.js';
import type { ProxyStats } from '../ops/stats.js';
import type { ProxyStage } from '../stages/stage.js';
import type { ReloadReport } from '../chain/reload.js';
import type { ProxyContainment } from '../ops/containment.js';
import { registerReadinessMetrics, resolverHealthProbe, type ResolverHealthTarget } from './resolver-health.js';
import { auditToAccessLog, type AccessLog } from '../ops/access-log.js';
import { dashboardPlugin } from './dashboard/routes.js';
import { HISTORY_DESCRIPTION, sinceParam, type StatsHistory } from '../ops/stats-history.js';

export interface AdminDeps {
  /** The containment boundary: an admin call that fails inside the proxy (a 5xx) is counted as `admin`. */
  readonly guard?: ProxyContainment;
  /** `--admin-token`: required on state-changing calls when set. */
  readonly adminToken: string | undefined;
  readonly stats: ProxyStats;
  readonly registry: Registry;
  readonly stages: readonly ProxyStage[];
  readonly draining: () => boolean;
  /** `/ready`'s health check: the resolver in use and its address (`resolver-health.ts`). */
  readonly resolverHealth: ResolverHealthTarget;
  /** More checks `/ready` consults (the overload manager: 503 while it sheds). */
  readonly readinessChecks?: readonly ReadinessCheck[];
  /** `POST /filters/reload`. */
  readonly reload: () => Promise<ReloadReport>;
  /**
   * Where the readiness check's changes and state-changing admin calls are logged (default: a `proxy` logger). A
   * cluster worker logs no admin calls: only its primary calls its admin, and the primary logs the caller.
   */
  readonly log?: Logger;
  /** The access log: state-changing admin calls are written there (with the caller's address) when it is on. */
  readonly accessLog?: AccessLog;
  /** `GET /stats/history`: the last minutes, per second, for the dashboard's charts (absent: no route). */
  readonly history?: StatsHistory;
}

/** A reload's answer on the admin API: its HTTP status and JSON body. */
export function reloadAnswer(report: ReloadReport): { readonly status: number; readonly body: Record<string, unknown> } {
  if (report.kind === 'reloaded') {
    return { status: 200, body: { generation: report.generation, filters: report.filters, restartNeeded: report.restartNeeded } };
  }
  return report.stage === 'config'
    ? { status: 422, body: { error: 'CONFIG_INVALID', code: 'CONFIG_INVALID', reason: report.reason } }
    : { status: 500, body: { error: 'FILTER_LOAD_FAILED', code: 'FILTER_LOAD_FAILED', reason: report.reason } };
}

/** The `/stats` JSON of this process (contract order: requests, extproc, upstream, cache, reruns, rerunAttempts, resolver, then other blocks such as tunnels, internalErrors, process). */
export function statsDocument(deps: Pick<AdminDeps, 'stats' | 'stages'>): Record<string, unknown> {
  const mine = deps.stats.snapshot();
  // The stages fill in their blocks: `cache` (actor-cache, or the cache-off stage) and `resolver` (ext-proc or apiserver).
  const blocks: Record<string, unknown> = {};
  for (const stage of deps.stages) Object.assign(blocks, stage.stats?.());
  return {
    requests: mine.requests,
    extproc: mine.extproc,
    upstream: mine.upstream,
    cache: blocks.cache,
    reruns: mine.reruns,
    rerunAttempts: mine.rerunAttempts,
    resolver: blocks.resolver,
    ...Object.fromEntries(Object.entries(blocks).filter(([k]) => k !== 'cache' && k !== 'resolver')),
    internalErrors: mine.internalErrors,
    process: processStats(),
  };
}

export function resetStats(deps: Pick<AdminDeps, 'stats' | 'stages'>): void {
  deps.stats.reset();
  for (const stage of deps.stages) stage.resetStats?.();
  resetProcessStats();
}

export async function createAdmin(deps: AdminDeps): Promise<FastifyInstance> {
  const app = createAdminApp();
  guardAdmin(app, { token: deps.adminToken });
  const guard = deps.guard;
  if (guard !== undefined) {
    // Fastify answers a route that throws with 500 itself (that request alone); the boundary logs and counts it.
    app.addHook('onError', async (_req, _reply, err: Error & { statusCode?: number }) => {
      if (err.statusCode === undefined || err.statusCode >= 500) guard.caught('admin', undefined, err);
    });
  }
  const log = deps.log ?? createLogger('proxy');
  const probe = resolverHealthProbe(deps.resolverHealth, log).start();
  app.addHook('onClose', async () => probe.stop());
  const checks: readonly ReadinessCheck[] = [probe, ...(deps.readinessChecks ?? [])];
  registerReadinessMetrics(deps.registry, probe, deps.draining, deps.readinessChecks);
  // A cluster worker's admin is called only by its primary, which logs the caller: no second audit line.
  const audit = cluster.isWorker ? undefined : log;
  const auditTo = cluster.isWorker ? undefined : auditToAccessLog(deps.accessLog);
  registerOpsRoutes(app, {
    component: 'proxy',
    readiness: () => readinessReport(deps.draining() ? 'draining' : 'serving', checks),
    stats: () => statsDocument(deps),
    resetStats: () => resetStats(deps),
    registry: deps.registry,
    ...(audit === undefined ? {} : { log: audit }),
    ...(auditTo === undefined ? {} : { auditTo }),
  });
  app.get('/upstreams', { config: { description: 'upstream attempts and failures per worker address (the same bounded set as the worker metrics)' } }, async () => ({
    maxWorkers: deps.stats.live.workers.maxWorkers,
    workers: deps.stats.live.workers.counts(),
  }));
  app.post('/filters/reload', { config: { description: 're-reads the config and the filter modules and swaps the user filters' } }, async (_req, reply) => {
    const { status, body } = reloadAnswer(await deps.reload());
    return reply.code(status).send(body);
  });
  const history = deps.history;
  if (history !== undefined) {
    app.get<{ Querystring: { since?: string } }>('/stats/history', { config: { description: HISTORY_DESCRIPTION } }, async (req) => history.document(sinceParam(req.query.since)));
  }
  await app.register(dashboardPlugin());
  for (const stage of deps.stages) {
    if (stage.admin !== undefined) await app.register(stage.admin);
  }
  return app;
}
