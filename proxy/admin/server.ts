/**
 * The admin server (fastify, its own listener): the common ops routes (lib/ops-routes.ts): `GET /ready` (503
 * `DRAINING` while draining), `GET /stats` (the JSON contract), `POST /stats/reset` (answers the fresh `/stats`),
 * `GET /metrics` (Prometheus text); `POST /filters/reload` (`chain/reload.ts`: 200 with the new filters, or the
 * reason the old ones stay: 422 `CONFIG_INVALID`, 500 `FILTER_LOAD_FAILED`); plus whatever the built-in stages add
 * (the cache's `/cache` endpoints). Every call but a GET passes the admin guard.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { processStats, resetProcessStats } from '../../lib/process-stats.js';
import { registerOpsRoutes } from '../../lib/ops-routes.js';
import { guardAdmin } from '../../lib/admin-guard.js';
import type { ProxyStats } from '../ops/stats.js';
import type { ProxyStage } from '../stages/stage.js';
import type { ReloadReport } from '../chain/reload.js';

export interface AdminDeps {
  /** `--admin-token`: required on state-changing calls when set. */
  readonly adminToken: string | undefined;
  readonly stats: ProxyStats;
  readonly registry: Registry;
  readonly stages: readonly ProxyStage[];
  readonly draining: () => boolean;
  /** `POST /filters/reload`. */
  readonly reload: () => Promise<ReloadReport>;
}

/** A reload's answer on the admin API: its HTTP status and JSON body. */
export function reloadAnswer(report: ReloadReport): { readonly status: number; readonly body: Record<string, unknown> } {
  if (report.kind === 'reloaded') {
    return { status: 200, body: { generation: report.generation, filters: report.filters, restartNeeded: report.restartNeeded } };
  }
  return report.stage === 'config'
    ? { status: 422, body: { error: 'CONFIG_INVALID', reason: report.reason } }
    : { status: 500, body: { error: 'FILTER_LOAD_FAILED', reason: report.reason } };
}

/** The `/stats` JSON of this process (contract order: requests, extproc, upstream, cache, reruns, rerunAttempts, resolver, then other blocks such as tunnels, process). */
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
    process: processStats(),
  };
}

export function resetStats(deps: Pick<AdminDeps, 'stats' | 'stages'>): void {
  deps.stats.reset();
  for (const stage of deps.stages) stage.resetStats?.();
  resetProcessStats();
}

export async function createAdmin(deps: AdminDeps): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  guardAdmin(app, { token: deps.adminToken });
  registerOpsRoutes(app, {
    readiness: () => (deps.draining() ? 'draining' : 'live'),
    stats: () => statsDocument(deps),
    resetStats: () => resetStats(deps),
    registry: deps.registry,
  });
  app.post('/filters/reload', async (_req, reply) => {
    const { status, body } = reloadAnswer(await deps.reload());
    return reply.code(status).send(body);
  });
  for (const stage of deps.stages) {
    if (stage.admin !== undefined) await app.register(stage.admin);
  }
  return app;
}
