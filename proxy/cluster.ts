/**
 * `--workers N`: a node:cluster primary and N proxy processes sharing the ingress listener. Each worker runs the
 * whole chain (with its own cache, pools and ext_proc channel) and an admin server on an internal loopback port;
 * the primary owns the public admin listener and aggregates: `/stats` sums the workers' counters, `/metrics`
 * merges their registries (prom-client's AggregatorRegistry), `/stats/reset` and every other admin call (e.g. the
 * cache endpoints) go to each worker. SIGTERM drains every worker, then the primary exits.
 */
import cluster, { type Worker } from 'node:cluster';
import Fastify from 'fastify';
import { request } from 'undici';
import { AggregatorRegistry } from 'prom-client';
import { createLogger, logReady, type Logger } from '../lib/logger.js';
import { boundAddress } from '../lib/address.js';
import { onShutdownSignal } from '../lib/shutdown.js';
import { processStats, resetProcessStats } from '../lib/process-stats.js';
import type { ProxyConfig } from './config.js';
import { startProxyProcess, type AssembleStages } from './proxy-process.js';
import { sendReady } from '../lib/ops-routes.js';

const LISTENING = 'actor-edge:listening';
const DRAIN = 'actor-edge:drain';

interface WorkerInfo {
  readonly worker: Worker;
  ingress?: string;
  admin?: string;
}

/** Sums numbers leaf by leaf; other values keep the first one seen. */
export function sumDocuments(docs: readonly unknown[]): unknown {
  const first = docs[0];
  if (typeof first === 'number') return docs.reduce<number>((a, d) => a + (typeof d === 'number' ? d : 0), 0);
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return first;
  const keys = new Set<string>();
  for (const d of docs) if (d !== null && typeof d === 'object') for (const k of Object.keys(d)) keys.add(k);
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    out[k] = sumDocuments(docs.map((d) => (d as Record<string, unknown> | null)?.[k]).filter((v) => v !== undefined));
  }
  return out;
}

async function callWorker(admin: string, method: string, url: string, body?: string): Promise<{ status: number; text: string }> {
  const res = await request(`http://${admin}${url}`, {
    method: method as 'GET',
    ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

export async function runClusterPrimary(config: ProxyConfig, log: Logger): Promise<void> {
  const infos = new Map<number, WorkerInfo>();
  let draining = false;
  let allExited: (() => void) | undefined;

  let reportReady!: () => void;
  let failStart!: (e: Error) => void;
  const started = new Promise<void>((res, rej) => {
    reportReady = res;
    failStart = rej;
  });
  let ready = false;

  const fork = (): void => {
    const worker = cluster.fork();
    const info: WorkerInfo = { worker };
    infos.set(worker.id, info);
    worker.on('message', (m: { type?: string; ingress?: string; admin?: string }) => {
      if (m?.type !== LISTENING) return;
      info.ingress = m.ingress;
      info.admin = m.admin;
      if (!ready && [...infos.values()].filter((i) => i.admin !== undefined).length >= config.workers) {
        ready = true;
        reportReady();
      }
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    infos.delete(worker.id);
    if (draining) {
      if (infos.size === 0) allExited?.();
      return;
    }
    if (!ready) {
      failStart(new Error(`proxy worker exited during start-up (code ${code}, signal ${signal})`));
      return;
    }
    log.error({ worker: worker.id, code, signal }, 'proxy worker died: starting a replacement');
    fork();
  });

  for (let i = 0; i < config.workers; i++) fork();
  await started;

  const live = (): WorkerInfo[] => [...infos.values()].filter((i) => i.admin !== undefined);
  const admin = Fastify({ logger: false });
  admin.get('/ready', async (_req, reply) => sendReady(reply, draining ? 'draining' : 'live'));
  const statsDocument = async (): Promise<Record<string, unknown>> => {
    const docs = await Promise.all(live().map(async (i) => JSON.parse((await callWorker(i.admin as string, 'GET', '/stats')).text) as unknown));
    const summed = sumDocuments(docs) as Record<string, unknown>;
    summed.process = sumDocuments([summed.process, processStats()]);
    summed.workers = docs.length;
    return summed;
  };
  admin.get('/stats', statsDocument);
  admin.post('/stats/reset', async () => {
    await Promise.all(live().map((i) => callWorker(i.admin as string, 'POST', '/stats/reset', '{}')));
    resetProcessStats();
    return statsDocument();
  });
  admin.get('/metrics', async (_req, reply) => {
    const all = await Promise.all(
      live().map(async (i) => JSON.parse((await callWorker(i.admin as string, 'GET', '/internal/metrics.json')).text) as Parameters<typeof AggregatorRegistry.aggregate>[0][number]),
    );
    const merged = AggregatorRegistry.aggregate(all);
    return reply.type(merged.contentType).send(await merged.metrics());
  });
  // Everything else (e.g. the cache endpoints) goes to every worker.
  admin.all('/*', async (req, reply) => {
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const answers = await Promise.all(live().map((i) => callWorker(i.admin as string, req.method, req.url, body)));
    if (answers.length === 1) {
      const only = answers[0] as { status: number; text: string };
      return reply.code(only.status).type('application/json').send(only.text);
    }
    const parsed = answers.map((a) => {
      try {
        return { status: a.status, body: JSON.parse(a.text) as unknown };
      } catch {
        return { status: a.status, body: a.text };
      }
    });
    const ok = parsed.find((p) => p.status < 300);
    return reply.code(ok ? 200 : (parsed[0]?.status ?? 502)).send({ workers: parsed });
  });
  await admin.listen({ host: config.admin.host, port: config.admin.port });

  const first = live()[0] as WorkerInfo;
  onShutdownSignal(log, async () => {
    draining = true;
    const exited = new Promise<void>((resolve) => {
      allExited = resolve;
      if (infos.size === 0) resolve();
    });
    for (const { worker } of infos.values()) worker.send({ type: DRAIN });
    const grace = setTimeout(() => {
      for (const { worker } of infos.values()) worker.process.kill('SIGKILL');
    }, config.drainTimeoutMs + 5000);
    await exited;
    clearTimeout(grace);
    await admin.close();
  });
  logReady(log, { ingress: first.ingress as string, admin: boundAddress(admin.server), workers: String(config.workers) });
}

export async function runClusterWorker(config: ProxyConfig, assemble: AssembleStages): Promise<void> {
  const log = createLogger('proxy').child({ worker: cluster.worker?.id });
  const running = await startProxyProcess(config, assemble, { role: 'worker', log });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'drain failed');
        process.exit(1);
      },
    );
  };
  process.on('message', (m: { type?: string }) => {
    if (m?.type === DRAIN) stop();
  });
  process.on('disconnect', stop); // the primary is gone
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.send?.({ type: LISTENING, ingress: running.ingress, admin: running.admin });
}
