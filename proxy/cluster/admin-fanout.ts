/**
 * The primary's public admin server, following the ops conventions (lib/ops-routes.ts): `/live`, `/ready` (503 `DRAINING`
 * while draining), `/stats` summed over the workers plus the primary's own process stats, `/stats/reset` on every
 * worker (answering the fresh summed `/stats`), `/metrics` merged with prom-client's
 * AggregatorRegistry, `/filters/reload` on every worker (failing when any worker's reload failed), and every
 * other call (e.g. the cache endpoints) fanned out to each worker.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { AggregatorRegistry } from 'prom-client';
import { processStats, resetProcessStats } from '../../lib/process-stats.js';
import { guardAdmin } from '../../lib/admin-guard.js';
import { registerLive, sendReady } from '../../lib/ops-routes.js';
import { sumDocuments } from './sum-documents.js';
import type { WorkerSupervisor } from './supervisor.js';

interface WorkerAnswer {
  readonly status: number;
  readonly text: string;
}

type WorkerMetrics = Parameters<typeof AggregatorRegistry.aggregate>[0][number];

async function callWorker(admin: string, method: string, url: string, token: string | undefined, body?: string): Promise<WorkerAnswer> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(`http://${admin}${url}`, { method: method as 'GET', headers, ...(body !== undefined ? { body } : {}) });
  return { status: res.statusCode, text: await res.body.text() };
}

export interface PrimaryAdminOptions {
  /** `--admin-token`: required on state-changing calls, and forwarded to the workers' internal admins. */
  readonly adminToken: string | undefined;
}

export function createPrimaryAdmin(workers: WorkerSupervisor, opts: PrimaryAdminOptions): FastifyInstance {
  /** Calls every live worker's admin server. */
  const callAll = (method: string, url: string, body?: string): Promise<WorkerAnswer[]> =>
    Promise.all(workers.live().map((i) => callWorker(i.admin as string, method, url, opts.adminToken, body)));
  const admin = Fastify({ logger: false });
  guardAdmin(admin, { token: opts.adminToken });
  registerLive(admin); // the primary's own liveness, not a worker's
  admin.get('/ready', async (_req, reply) => sendReady(reply, workers.draining ? 'draining' : 'live'));
  const statsDocument = async (): Promise<Record<string, unknown>> => {
    const docs = (await callAll('GET', '/stats')).map((a) => JSON.parse(a.text) as unknown);
    const summed = sumDocuments(docs) as Record<string, unknown>;
    summed.process = sumDocuments([summed.process, processStats()]);
    summed.workers = docs.length;
    return summed;
  };
  admin.get('/stats', statsDocument);
  admin.post('/stats/reset', async () => {
    await callAll('POST', '/stats/reset', '{}');
    resetProcessStats();
    return statsDocument();
  });
  admin.get('/metrics', async (_req, reply) => {
    const all = (await callAll('GET', '/internal/metrics.json')).map((a) => JSON.parse(a.text) as WorkerMetrics);
    const merged = AggregatorRegistry.aggregate(all);
    return reply.type(merged.contentType).send(await merged.metrics());
  });
  admin.post('/filters/reload', async (_req, reply) => {
    const { status, body } = await reloadWorkers(workers, opts.adminToken);
    return reply.code(status).send(body);
  });
  admin.all('/*', async (req, reply) => {
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const answers = await callAll(req.method, req.url, body);
    if (answers.length === 1) {
      const only = answers[0] as WorkerAnswer;
      return reply.code(only.status).type('application/json').send(only.text);
    }
    const parsed = answers.map(parseAnswer);
    const ok = parsed.find((p) => p.status < 300);
    return reply.code(ok ? 200 : (parsed[0]?.status ?? 502)).send({ workers: parsed });
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
