/**
 * One proxy process: counters and metrics, the chain (stages from `chain/assemble.ts`, then the router), the
 * ingress, the admin server, and the SIGTERM drain. Runs standalone (`--workers 1`) or as one node:cluster worker
 * (then its admin listens on an internal loopback port and the primary aggregates it).
 */
import type { FastifyInstance } from 'fastify';
import { createLogger, logReady, type Logger } from '../lib/logger.js';
import { boundAddress, formatHostPort } from '../lib/address.js';
import { onShutdownSignal } from '../lib/shutdown.js';
import type { ProxyConfig } from './config.js';
import { MAX_HEADER_BYTES } from './config.js';
import { ProxyStats } from './ops/stats.js';
import { createProxyMetrics } from './ops/metrics.js';
import { UpstreamPools, type PoolOptions } from './upstream/pools.js';
import { createH2cSessions } from './upstream/h2c-sessions.js';
import { UndiciRouter } from './upstream/router.js';
import { Chain } from './chain/chain.js';
import { Ingress } from './edge/ingress.js';
import { createAdmin } from './ops/admin.js';
import type { ProxyStage, StageDeps } from './chain/stage.js';

export type AssembleStages = (deps: StageDeps) => Promise<ProxyStage[]>;

export interface RunningProxy {
  readonly ingress: string;
  /** The HTTPS listener's address, with `--tls-listen`. */
  readonly tls?: string;
  readonly admin: string;
  /** Closes the ingress listener; open connections are served as before (the first step of a drain). */
  stopAccepting(): void;
  /** Drains and closes everything; resolves when done. */
  close(): Promise<void>;
}

export interface ProcessOptions {
  /** `worker`: bind admin on an internal port, do not log "ready" (the primary does). */
  readonly role: 'standalone' | 'worker';
  readonly log?: Logger;
}

export async function startProxyProcess(config: ProxyConfig, assemble: AssembleStages, opts: ProcessOptions): Promise<RunningProxy> {
  const log = opts.log ?? createLogger('proxy');
  const stats = new ProxyStats(config.rerun.maxReruns);
  const counters = stats.live;
  const metrics = createProxyMetrics(counters);
  const stages = await assemble({ config, log, registry: metrics.registry, counters });
  const poolOptions: PoolOptions = {
    connectTimeoutMs: config.connectTimeoutMs,
    headersTimeoutMs: config.routeTimeoutMs,
    bodyTimeoutMs: 300_000,
    maxHeaderBytes: MAX_HEADER_BYTES,
    sweepIntervalMs: 60_000,
    maxConnections: config.upstreamMaxConnections,
    maxPending: config.upstreamMaxPending,
  };
  const pools = new UpstreamPools(poolOptions);
  const h2cSessions = createH2cSessions(poolOptions);
  const router = new UndiciRouter(pools, counters, { routeTimeoutMs: config.routeTimeoutMs }, h2cSessions);
  const chain = new Chain(
    stages.flatMap((s) => (s.filter === undefined ? [] : [s.filter])),
    router,
    counters,
    config.rerun,
  );
  const ingress = new Ingress({ config, chain, counters, observeDuration: metrics.observeDuration, log, stages });
  const admin: FastifyInstance = await createAdmin({ config, stats, registry: metrics.registry, stages, draining: () => ingress.draining });
  if (opts.role === 'worker') {
    admin.get('/internal/metrics.json', async () => metrics.registry.getMetricsAsJSON());
  }

  await ingress.listen(config.listen.host, config.listen.port);
  if (config.tls !== undefined) await ingress.listenTls(config.tls.listen.host, config.tls.listen.port, config.tls);
  const adminHost = opts.role === 'worker' ? '127.0.0.1' : config.admin.host;
  const adminPort = opts.role === 'worker' ? 0 : config.admin.port;
  await admin.listen({ host: adminHost, port: adminPort });
  const addresses: { ingress: string; admin: string; tls?: string } = { ingress: boundAddress(ingress.listener.server), admin: boundAddress(admin.server) };
  const tlsListener = ingress.tlsListener;
  if (tlsListener !== undefined) addresses.tls = boundAddress(tlsListener.server);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      log.info({ inflight: ingress.inflight, drainTimeoutMs: config.drainTimeoutMs }, 'draining');
      const clean = await ingress.drain(config.drainTimeoutMs);
      if (!clean) log.warn({ inflight: ingress.inflight }, 'drain timeout: closing remaining connections');
      await Promise.all([pools, h2cSessions].map((p) => (clean ? p.close() : p.destroy())));
      for (const stage of stages) await stage.close?.();
      await admin.close();
      log.info('stopped');
    })());

  if (opts.role === 'standalone') {
    onShutdownSignal(log, stop);
    logReady(log, addresses);
  }
  log.debug({ filters: chain.filters.map((f) => f.name), listen: formatHostPort(config.listen.host, config.listen.port) }, 'chain assembled');
  return { ...addresses, stopAccepting: () => ingress.stopAccepting(), close: stop };
}
