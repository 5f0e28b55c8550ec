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
import { startProxyCertificateExpiry } from './ops/certificates.js';
import { UpstreamPools, type PoolOptions } from './upstream/pools.js';
import { createH2cSessions } from './upstream/h2c-sessions.js';
import { startUpstreamTls } from './upstream/tls.js';
import { UndiciRouter } from './upstream/router.js';
import { Chain } from './chain/chain.js';
import { Ingress } from './edge/ingress.js';
import { createAdmin } from './ops/admin.js';
import type { ProxyStage, StageDeps } from './chain/stage.js';
import { FilterReloader, type ReloadReport } from './chain/reload.js';
import { TunnelHub } from './upstream/tunnel-hub.js';
import { registerTunnelMetrics } from './ops/tunnel-metrics.js';
import { UpgradeHandler } from './edge/upgrade.js';
import { ConnectListener } from './edge/connect-listener.js';

export type AssembleStages = (deps: StageDeps) => Promise<ProxyStage[]>;

export interface RunningProxy {
  readonly ingress: string;
  /** The HTTPS listener's address, with `--tls-listen`. */
  readonly tls?: string;
  readonly admin: string;
  /** The CONNECT listener's address (`--connect-listen`). */
  readonly connect?: string;
  /** The CONNECT-over-TLS listener's address (`--connect-tls-listen`). */
  readonly connectTls?: string;
  /** Closes the ingress listener; open connections are served as before (the first step of a drain). */
  stopAccepting(): void;
  /** Drains and closes everything; resolves when done. */
  close(): Promise<void>;
  /** Re-reads the config and the filter modules and swaps the user filters (`chain/reload.ts`). */
  reload(): Promise<ReloadReport>;
}

export interface ProcessOptions {
  /** `worker`: bind admin on an internal port, do not log "ready" (the primary does). */
  readonly role: 'standalone' | 'worker';
  readonly log?: Logger;
  /** Reads the config again for a reload (default: the same config, so a reload re-imports the same modules). */
  readonly rereadConfig?: () => ProxyConfig;
}

export async function startProxyProcess(config: ProxyConfig, assemble: AssembleStages, opts: ProcessOptions): Promise<RunningProxy> {
  const log = opts.log ?? createLogger('proxy');
  const stats = new ProxyStats(config.rerun.maxReruns);
  const counters = stats.live;
  const metrics = createProxyMetrics(counters);
  const certificateExpiry = startProxyCertificateExpiry(config, log, metrics.registry);
  const upstreamTls = config.upstreamTls === undefined ? undefined : startUpstreamTls(config.upstreamTls, config.connectTimeoutMs, log, counters);
  const stages = await assemble({ config, log, registry: metrics.registry, counters });
  const poolOptions: PoolOptions = {
    connectTimeoutMs: config.connectTimeoutMs,
    headersTimeoutMs: config.routeTimeoutMs,
    bodyTimeoutMs: 300_000,
    maxHeaderBytes: MAX_HEADER_BYTES,
    sweepIntervalMs: 60_000,
    ...(upstreamTls === undefined ? {} : { connector: upstreamTls.connector }),
    maxConnections: config.upstreamMaxConnections,
    maxPending: config.upstreamMaxPending,
  };
  const pools = new UpstreamPools(poolOptions);
  // gRPC: HTTP/2 sessions, h2c or (with upstream mTLS) TLS with ALPN `h2`.
  const h2cSessions = createH2cSessions(upstreamTls === undefined ? poolOptions : { ...poolOptions, connector: upstreamTls.h2Connector });
  const hub = new TunnelHub(log);
  registerTunnelMetrics(metrics.registry, hub.stats);
  const router = new UndiciRouter(
    pools,
    counters,
    {
      routeTimeoutMs: config.routeTimeoutMs,
      tunnels: { hub, idleTimeoutMs: config.tunnelIdleTimeoutMs },
    },
    h2cSessions,
  );
  const chain = new Chain(
    stages.flatMap((s) => (s.filter === undefined ? [] : [s.filter])),
    router,
    counters,
    { ...config.rerun, filterTimeoutMs: config.filterTimeoutMs, userFilters: stages.filter((s) => s.userFilter === true).length },
  );
  const reloader = new FilterReloader(chain, config, opts.rereadConfig ?? (() => config), log);
  const reload = (): Promise<ReloadReport> => reloader.reload();
  const upgrades = new UpgradeHandler({ config, chain, counters, log, stages, hub });
  const ingress = new Ingress({ config, chain, counters, observeDuration: metrics.observeDuration, log, stages, upgrades });
  const connect = config.connectListen === undefined ? undefined : new ConnectListener({ config, hub, log, ingress: ingress.server });
  const connectTls = config.connectTls === undefined ? undefined : new ConnectListener({ config, hub, log, ingress: ingress.server, tls: config.connectTls });
  const admin: FastifyInstance = await createAdmin({
    config,
    stats,
    registry: metrics.registry,
    stages: [...stages, hub.asStage()],
    draining: () => ingress.draining,
    reload,
  });
  if (opts.role === 'worker') {
    admin.get('/internal/metrics.json', async () => metrics.registry.getMetricsAsJSON());
  }

  await ingress.listen(config.listen.host, config.listen.port);
  if (config.tls !== undefined) await ingress.listenTls(config.tls.listen.host, config.tls.listen.port, config.tls);
  if (connect !== undefined && config.connectListen !== undefined) await connect.listen(config.connectListen.host, config.connectListen.port);
  if (connectTls !== undefined && config.connectTls !== undefined) await connectTls.listen(config.connectTls.listen.host, config.connectTls.listen.port);
  const adminHost = opts.role === 'worker' ? '127.0.0.1' : config.admin.host;
  const adminPort = opts.role === 'worker' ? 0 : config.admin.port;
  await admin.listen({ host: adminHost, port: adminPort });
  const tlsListener = ingress.tlsListener;
  const addresses = {
    ingress: boundAddress(ingress.listener.server),
    ...(tlsListener === undefined ? {} : { tls: boundAddress(tlsListener.server) }),
    admin: boundAddress(admin.server),
    ...(connect === undefined ? {} : { connect: boundAddress(connect.server) }),
    ...(connectTls === undefined ? {} : { connectTls: boundAddress(connectTls.server) }),
  };
  const stopAccepting = (): void => {
    void ingress.stopAccepting();
    void connect?.stopAccepting();
    void connectTls?.stopAccepting();
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      log.info({ inflight: ingress.inflight, drainTimeoutMs: config.drainTimeoutMs }, 'draining');
      void connect?.stopAccepting();
      void connectTls?.stopAccepting();
      // Open tunnels keep flowing until the drain timeout, then are closed; the ingress waits for their sockets.
      const tunnels = hub.drain(config.drainTimeoutMs);
      const clean = (await ingress.drain(config.drainTimeoutMs)) && (await tunnels);
      if (!clean) log.warn({ inflight: ingress.inflight }, 'drain timeout: closing remaining connections');
      await Promise.all([pools, h2cSessions].map((p) => (clean ? p.close() : p.destroy())));
      upstreamTls?.close();
      certificateExpiry.close();
      for (const stage of stages) await stage.close?.();
      await admin.close();
      log.info('stopped');
    })());

  if (opts.role === 'standalone') {
    process.on('SIGHUP', () => void reload()); // the reloader logs the outcome
    onShutdownSignal(log, stop);
    logReady(log, addresses);
  }
  log.debug({ filters: chain.filters.map((f) => f.name), listen: formatHostPort(config.listen.host, config.listen.port) }, 'chain assembled');
  return { ...addresses, stopAccepting, close: stop, reload };
}
