/**
 * The primary's public admin server, following the ops conventions (lib/ops-routes.ts): `/` (its own endpoints
 * and those it forwards), `/live`, `/ready` (ready while every worker is: 503 with each worker's reasons
 * otherwise, `DRAINING` while draining), `/stats` summed over the workers plus the primary's own process stats
 * (ratios computed again from the sums), `/stats/reset` on every worker (answering the fresh summed `/stats`),
 * `/metrics` merged with prom-client's AggregatorRegistry, `/filters/reload` on every worker (failing when any
 * worker's reload failed), `/stats/history` summed sample by sample, `/dashboard` (served here, reading the primary's own summed endpoints), and every other
 * call (e.g. the cache endpoints) fanned out to each worker: `{"workers": [{status, body}, ...]}`, or, for a route
 * no worker has, the product's 404. State-changing calls are logged here with the caller's address.
 */
import type { FastifyInstance } from 'fastify';
import { createAdminApp } from '../../lib/admin-app.js';
import { request } from 'undici';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from 'pino';
import { processStats, resetProcessStats } from '../../lib/process-stats.js';
import { guardAdmin } from '../../lib/admin-guard.js';
import { auditToAccessLog, type AccessLog } from '../ops/access-log.js';
import { registerOpsRoutes, type AdminEndpoint, type ReadinessReport } from '../../lib/ops-routes.js';
import { sumDocuments } from './sum-documents.js';
import { hitRatio } from '../stages/actor-cache/stats.js';
import { dashboardPlugin } from '../admin/dashboard/routes.js';
import { HISTORY_DESCRIPTION, mergeHistories, type HistoryDocument } from '../ops/stats-history.js';
import type { WorkerInfo, WorkerSupervisor } from './supervisor.js';

interface WorkerAnswer {
  readonly status: number;
  readonly text: string;
}

type WorkerMetrics = Parameters<typeof AggregatorRegistry.aggregate>[0][number];

async function callWorker(admin: string, method: string, url: string, token: string | undefined, body?: string, accept?: string): Promise<WorkerAnswer> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (accept !== undefined) headers.accept = accept;
  const res = await request(`http://${admin}${url}`, { method: method as 'GET', headers, ...(body !== undefined ? { body } : {}) });
  return { status: res.statusCode, text: await res.body.text() };
}

export interface PrimaryAdminOptions {
  /** `--admin-token`: required on state-changing calls, and forwarded to the workers' internal admins. */
  readonly adminToken: string | undefined;
  /** Where state-changing calls are logged. */
  readonly log?: Logger;
  /** Where state-changing calls are written when it is on (the primary's own access-log stream). */
  readonly accessLog?: AccessLog;
}

/** The summed `/stats` of the workers, with the ratios computed again from the summed counts. */
export function summedStats(docs: readonly unknown[]): Record<string, unknown> {
  const summed = (sumDocuments(docs) ?? {}) as Record<string, unknown>;
  const egress = summed.egress as { cache?: Record<string, unknown> } | undefined;
  for (const cache of [summed.cache as Record<string, unknown> | undefined, egress?.cache]) {
    if (cache !== undefined && typeof cache.hits === 'number' && typeof cache.misses === 'number') cache.hitRatio = hitRatio(cache.hits, cache.misses);
  }
  return summed;
}

/** Ready while every worker is; a worker that is not says why (prefixed with its id). */
export function workersReadiness(answers: readonly { readonly id: number; readonly answer: WorkerAnswer }[]): ReadinessReport {
  if (answers.length === 0) return { state: 'not-ready', reasons: ['no proxy worker process is running'] };
  const reasons: string[] = [];
  for (const { id, answer } of answers) {
    if (answer.status === 200) continue;
    let said: readonly string[] = [`answered ${answer.status}`];
    try {
      const doc = JSON.parse(answer.text) as { reasons?: unknown };
      if (Array.isArray(doc.reasons) && doc.reasons.length > 0) said = doc.reasons.map(String);
    } catch {
      // not JSON: the status says enough
    }
    reasons.push(...said.map((r) => `worker ${id}: ${r}`));
  }
  return reasons.length === 0 ? { state: 'live', reasons: [] } : { state: 'not-ready', reasons };
}

export function createPrimaryAdmin(workers: WorkerSupervisor, opts: PrimaryAdminOptions): FastifyInstance {
  const live = (): WorkerInfo[] => workers.live();
  /** Calls every live worker's admin server. */
  const callAll = (method: string, url: string, body?: string, accept?: string): Promise<WorkerAnswer[]> =>
    Promise.all(live().map((i) => callWorker(i.admin as string, method, url, opts.adminToken, body, accept)));
  const admin = createAdminApp();
  guardAdmin(admin, { token: opts.adminToken });
  const statsDocument = async (): Promise<Record<string, unknown>> => {
    const docs = (await callAll('GET', '/stats')).map((a) => JSON.parse(a.text) as unknown);
    const summed = summedStats(docs);
    summed.process = sumDocuments([summed.process, processStats()]);
    summed.workers = docs.length;
    return summed;
  };
  const auditTo = auditToAccessLog(opts.accessLog);
  registerOpsRoutes(admin, {
    component: 'proxy',
    readiness: async () => {
      if (workers.draining) return { state: 'draining', reasons: [] };
      const infos = live();
      const answers = await Promise.all(infos.map((i) => callWorker(i.admin as string, 'GET', '/ready', opts.adminToken, undefined, 'application/json')));
      return workersReadiness(infos.map((i, n) => ({ id: i.worker.id, answer: answers[n] as WorkerAnswer })));
    },
    stats: statsDocument,
    resetStats: async () => {
      await callAll('POST', '/stats/reset', '{}');
      resetProcessStats();
    },
    registry: async () => AggregatorRegistry.aggregate((await callAll('GET', '/internal/metrics.json')).map((a) => JSON.parse(a.text) as WorkerMetrics)),
    ...(opts.log === undefined ? {} : { log: opts.log }),
    ...(auditTo === undefined ? {} : { auditTo }),
    extraEndpoints: async () => {
      const first = live()[0];
      if (first === undefined) return [];
      const index = JSON.parse((await callWorker(first.admin as string, 'GET', '/', opts.adminToken)).text) as { endpoints?: AdminEndpoint[] };
      return (index.endpoints ?? []).filter((e) => !e.path.startsWith('/internal/')).map((e) => ({ ...e, description: `${e.description} (on every worker process)` }));
    },
  });
  admin.post('/filters/reload', { config: { description: 'every worker re-reads the config and its filter modules' } }, async (_req, reply) => {
    const { status, body } = await reloadWorkers(workers, opts.adminToken);
    return reply.code(status).send(body);
  });
  admin.get('/stats/history', { config: { description: `${HISTORY_DESCRIPTION}, summed over the workers` } }, async (req) => {
    const answers = await callAll('GET', req.url);
    return mergeHistories(answers.filter((a) => a.status === 200).map((a) => JSON.parse(a.text) as HistoryDocument));
  });
  void admin.register(dashboardPlugin());
  admin.all('/*', { config: { hidden: true } }, async (req, reply) => {
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const answers = await callAll(req.method, req.url, body);
    const parsed = answers.map(parseAnswer);
    if (parsed.length > 0 && parsed.every((p) => p.status === 404 && (p.body as { code?: unknown } | null)?.code === 'ROUTE_NOT_FOUND')) {
      return reply.code(404).send(parsed[0]?.body);
    }
    if (answers.length === 1) {
      const only = answers[0] as WorkerAnswer;
      return reply.code(only.status).type('application/json').send(only.text);
    }
    const ok = parsed.find((p) => p.status < 300);
    if (ok !== undefined) return reply.code(200).send({ workers: parsed });
    // Every worker refused alike (e.g. no binding anywhere): the product's {error, code}, with each worker's answer.
    const first = parsed[0]?.body as { error?: unknown; code?: unknown } | undefined;
    const alike = parsed.every((p) => p.status === parsed[0]?.status && (p.body as { code?: unknown } | null)?.code === first?.code);
    if (alike && typeof first?.code === 'string') return reply.code(parsed[0]?.status ?? 502).send({ error: first.error, code: first.code, workers: parsed });
    return reply.code(parsed[0]?.status ?? 502).send({ workers: parsed });
  });
  return admin;
}

/** Every worker reloads its filters; the answer fails when any worker's reload failed (each kept its old filters). */
export async function reloadWorkers(workers: WorkerSupervisor, adminToken: string | undefined): Promise<{ status: number; body: { workers: unknown[] } }> {
  const answers = await Promise.all(workers.live().map((i) => callWorker(i.admin as string, 'POST', '/filters/reload', adminToken, '{}')));
  const parsed = answers.map(parseAnswer);
  const failed = parsed.find((p) => p.status >= 300);
  return { status: failed?.status ?? 200, body: { workers: parsed } };
}

function parseAnswer(a: WorkerAnswer): { status: number; body: unknown } {
  try {
    return { status: a.status, body: JSON.parse(a.text) as unknown };
  } catch {
    return { status: a.status, body: a.text };
  }
}
