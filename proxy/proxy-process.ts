/**
 * One proxy process, wired from its config slices: counters and metrics, the stages (`stages/assemble.ts`) and the
 * egress verdict cache (`egress/egress-cache-stage.ts`), the router and its pools, the chain, the request lifecycle
 * and the ingress (listeners and protocol engines), the CONNECT listeners, the egress listener (`--egress-listen`),
 * the admin server, and the SIGTERM drain. Runs standalone (`--workers 1`) or as one node:cluster worker (then its
 * admin listens on an internal loopback port and the primary aggregates it).
 */
import type { FastifyInstance } from 'fastify';
import { createLogger, logReady, type Logger } from '../lib/logger.js';
import { boundAddress, formatHostPort, parseHostPort, type HostPort } from '../lib/address.js';
import { listening, settingOf } from '../lib/listen-error.js';
import { describeFilters, loadedFilters } from './chain/loaded-filters.js';
import { MAX_HEADER_BYTES } from '../lib/http-limits.js';
import { onShutdownSignal } from '../lib/shutdown.js';
import { PROXY_FLAGS, type ProxyConfig } from './config.js';
import { ProxyStats } from './ops/stats.js';
import { cacheLabelOf, createProxyMetrics, DURATION_BUCKETS } from './ops/metrics.js';
import { StatsHistory } from './ops/stats-history.js';
import { startProxyCertificateExpiry } from './ops/certificates.js';
import { AccessLog, type AccessLogSink } from './ops/access-log.js';
import { loadTracing } from '../lib/tracing/load.js';
import type { Tracing } from '../lib/tracing/provider.js';
import { ATTR_CACHE } from '../lib/tracing/attributes.js';
import { registerTunnelMetrics } from './ops/tunnel-metrics.js';
import { OverloadManager } from './ops/overload/manager.js';
import { OverloadTallies } from './ops/overload/tallies.js';
import { OverloadStats, type OverloadSources } from './ops/overload/stats.js';
import { registerOverloadMetrics } from './ops/overload/metrics.js';
import type { Sampler } from './ops/overload/sampler.js';
import { ReplayBudget } from './request/replay-budget.js';
import { BODY_GC_EVERY_BYTES, BodyBudget } from './request/body-budget.js';
import { GcPacer } from '../lib/gc-pacer.js';
import { ConnectionGate } from './edge/connection-gate.js';
import { UpstreamPools, type PoolOptions } from './upstream/pools.js';
import { createH2Sessions } from './upstream/h2-sessions.js';
import { startUpstreamTls } from './upstream/tls.js';
import { UndiciRouter } from './upstream/router.js';
import { createConnectProbe } from './upstream/probe.js';
import { TunnelHub } from './tunnels/hub.js';
import { Chain } from './chain/chain.js';
import { OffloadPool } from './chain/offload/offload-pool.js';
import { registerOffloadMetrics } from './chain/offload/offload-metrics.js';
import { OffloadStats } from './chain/offload/offload-stats.js';
import { FilterReloader, type ReloadReport } from './chain/reload.js';
import type { ProxyStage, StageDeps, StagesConfig } from './stages/stage.js';
import { cacheOutcome } from './stages/actor-cache/filter.js';
import { RequestLifecycle } from './edge/lifecycle.js';
import { Ingress } from './edge/ingress.js';
import { ConnectListener } from './edge/connect-listener.js';
import type { ForbiddenDestinations } from './egress/forbidden-destinations.js';
import { createAdmin } from './admin/server.js';
import { createProxyContainment } from './ops/containment.js';
import { createEgressStage } from './egress/egress-cache-stage.js';
import type { ResolverHealthTarget } from './admin/resolver-health.js';

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
  /** The egress listener's address (`--egress-listen`). */
  readonly egress?: string;
  /** Closes the ingress listener; open connections are served as before (the first step of a drain). */
  stopAccepting(): void;
  /** Drains and closes everything; resolves when done. */
  close(): Promise<void>;
  /** Re-reads the config and the filter modules and swaps the user filters (`chain/reload.ts`). */
  reload(): Promise<ReloadReport>;
  /** Opens the access-log file again (log rotation: SIGUSR1). */
  reopenAccessLog(): void;
}

export interface ProcessOptions {
  /** `worker`: bind admin on an internal port, do not log "ready" (the primary does). */
  readonly role: 'standalone' | 'worker';
  readonly log?: Logger;
  /** Reads the config again for a reload (default: the same config, so a reload re-imports the same modules). */
  readonly rereadConfig?: () => ProxyConfig;
  /** Where access-log lines go instead of `--access-log`'s destination (tests collect them). */
  readonly accessLogSink?: AccessLogSink;
  /** The overload monitors' readings and how often they are taken (tests drive the overload state with these). */
  readonly overload?: { readonly sampler?: Sampler; readonly intervalMs?: number };
}

/** The stages' slices of the config. */
export function stagesConfig(config: ProxyConfig): StagesConfig {
  return {
    actorSuffix: config.actorSuffix,
    filters: config.chain.filters,
    filterTimeoutMs: config.chain.filterTimeoutMs,
    rerunBudgetMs: config.chain.rerun.budgetMs,
    cache: config.cache,
    extProc: config.extProc,
    resolver: config.resolver,
  };
}

/**
 * What `/ready` checks: the resolver in use (`--resolver`) at its address, as often as `healthCheck` says, on the
 * resolver stage's own channel when one of `stages` offers it.
 */
export function resolverHealthTarget(config: Pick<ProxyConfig, 'resolver' | 'extProc' | 'healthCheck'>, stages: readonly ProxyStage[] = []): ResolverHealthTarget {
  const { kind, apiserver } = config.resolver;
  const client = stages.find((s) => s.healthClient !== undefined)?.healthClient;
  return { kind, address: kind === 'extproc' ? config.extProc.address : apiserver, check: config.healthCheck, ...(client === undefined ? {} : { client }) };
}

export async function startProxyProcess(config: ProxyConfig, assemble: AssembleStages, opts: ProcessOptions): Promise<RunningProxy> {
  const log = opts.log ?? createLogger('proxy');
  const { listeners, ingress: ingressConfig, upstream, ops } = config;
  const stats = new ProxyStats(config.chain.rerun.maxReruns);
  const counters = stats.live;
  const guard = createProxyContainment(log, counters.tallies.internalErrors);
  const metrics = createProxyMetrics(counters);
  // The dashboard's charts: per-second samples of the lifetime counters (`GET /stats/history`).
  const history = new StatsHistory({ requests: () => counters.tallies.requests.total, durationCounts: () => metrics.durationCounts() }, { bounds: DURATION_BUCKETS }).start();
  const certificateExpiry = startProxyCertificateExpiry(
    {
      servingCert: (listeners.tls ?? listeners.connectTls)?.certFile,
      upstream: upstream.tls,
      extProc: config.resolver.kind === 'extproc' ? config.extProc.tls : undefined,
    },
    ops.certExpiryWarningHours,
    log,
    metrics.registry,
  );
  const upstreamTls = upstream.tls === undefined ? undefined : startUpstreamTls(upstream.tls, upstream.connectTimeoutMs, log, counters.tallies.upstream);
  // Budgets and overload (ops/overload/): the monitors and the state every action reads, the replay budget every
  // request body takes from, and one connection count over every client listener.
  const overload = new OverloadManager({
    triggers: config.overload.triggers,
    tallies: new OverloadTallies(),
    log,
    ...(opts.overload?.sampler === undefined ? {} : { sampler: opts.overload.sampler }),
    ...(opts.overload?.intervalMs === undefined ? {} : { intervalMs: opts.overload.intervalMs }),
  }).start();
  const replayBudget = new ReplayBudget(config.overload.replayBufferBudgetBytes);
  const bodyBudget = new BodyBudget(config.overload.bodyInflightBudgetBytes, new GcPacer(BODY_GC_EVERY_BYTES));
  const connectionGate = new ConnectionGate(config.overload.maxConnections, overload.tallies, overload);
  const overloadSources: OverloadSources = {
    manager: overload,
    budget: replayBudget,
    bodyBudget,
    maxConnections: config.overload.maxConnections,
    extprocQueue: { maxStreams: config.extProc.maxStreams, maxWaiting: config.extProc.queueMaxWaiting, timeoutMs: config.extProc.queueTimeoutMs },
  };
  registerOverloadMetrics(metrics.registry, overloadSources);
  const overloadStats = new OverloadStats(overloadSources);
  // The filters' worker pool (chain/offload/): this process's own, with --workers N each process builds one.
  const offload = await OffloadPool.start(config.chain.offload);
  registerOffloadMetrics(metrics.registry, offload);
  const offloadStats = new OffloadStats(offload);
  const assembled = await assemble({
    config: stagesConfig(config),
    log,
    registry: metrics.registry,
    counters,
    guard,
    overload,
    offload,
  }).catch(async (err: unknown) => {
    await offload.close(); // its threads would keep a caller that goes on (a test, a supervisor) alive
    throw err;
  });
  // The egress verdict cache: no filter; listed with the stages for its /stats block, admin routes and shutdown.
  const egressCache = createEgressStage(config.egressCache, { registry: metrics.registry });
  const stages: ProxyStage[] = [...assembled, egressCache];
  const poolOptions: PoolOptions = {
    connectTimeoutMs: upstream.connectTimeoutMs,
    headersTimeoutMs: upstream.routeTimeoutMs,
    bodyTimeoutMs: 300_000,
    maxHeaderBytes: MAX_HEADER_BYTES,
    sweepIntervalMs: 60_000,
    ...(upstreamTls === undefined ? {} : { connector: upstreamTls.connector }),
    maxConnections: upstream.maxConnections,
    maxPending: upstream.maxPending,
  };
  const pools = new UpstreamPools(poolOptions);
  // gRPC: HTTP/2 sessions, h2c or (with upstream mTLS) TLS with ALPN `h2`.
  const h2Sessions = createH2Sessions(upstreamTls === undefined ? poolOptions : { ...poolOptions, connector: upstreamTls.h2Connector });
  const hub = new TunnelHub(log, guard);
  registerTunnelMetrics(metrics.registry, hub.stats);
  // Outlier detection probes a down worker the way the pools connect to it (TCP, or TCP plus the mTLS handshake).
  const probe = createConnectProbe({ connectTimeoutMs: upstream.connectTimeoutMs, ...(upstreamTls === undefined ? {} : { connector: upstreamTls.connector }) });
  const router = new UndiciRouter(pools, counters, { routeTimeoutMs: upstream.routeTimeoutMs, probe, log }, h2Sessions);
  counters.outliersDown = () => router.outliers?.downCount ?? 0;
  const chain = new Chain(
    stages.flatMap((s) => (s.filter === undefined ? [] : [s.filter])),
    router,
    counters,
    {
      ...config.chain.rerun,
      filterTimeoutMs: config.chain.filterTimeoutMs,
      userFilters: stages.filter((s) => s.userFilter === true).length,
      tunnels: { hub, idleTimeoutMs: config.tunnels.idleTimeoutMs },
    },
  );
  const tracing: Tracing | undefined = config.tracing.enabled ? await loadTracing(config.tracing, 'proxy', log) : undefined;
  const accessLog = new AccessLog(ops.accessLog, opts.accessLogSink);
  const reloader = new FilterReloader(chain, config, opts.rereadConfig ?? (() => config), log, (err) => guard.caught('filter-reload', undefined, err), offload);
  const reload = (): Promise<ReloadReport> => reloader.reload();
  const lifecycle = new RequestLifecycle({
    config: ingressConfig,
    chain,
    counters,
    // The cache outcome is the actor-cache stage's slot on the request: read here, so the edge imports no stage.
    observe: (ctx, seconds) => metrics.observeRequest(seconds, cacheLabelOf(cacheOutcome(ctx)), ctx.protocol),
    accessLog,
    tracer: tracing?.tracer,
    traceAttributes: (ctx) => ({ [ATTR_CACHE]: cacheLabelOf(cacheOutcome(ctx)) }),
    logFields: stages.flatMap((s) => (s.logFields === undefined ? [] : [s.logFields.bind(s)])),
    log,
    guard,
    replayBudget,
    bodyBudget,
    shedRequest: () => overload.shedRequest(),
  });
  const ingress = new Ingress(ingressConfig, lifecycle, hub, log, connectionGate);
  const connectDeps = { config: ingressConfig, hub, lifecycle, ingress: ingress.http1, log, admission: connectionGate };
  const connect = listeners.connect === undefined ? undefined : new ConnectListener(connectDeps);
  const connectTls = listeners.connectTls === undefined ? undefined : new ConnectListener({ ...connectDeps, tls: listeners.connectTls });
  // The egress listener: actors' outbound CONNECTs, decided through ext_proc on the resolver's channel. Its modules
  // are loaded only with --egress-listen (a process without it does not pay their load).
  const egress =
    config.egressListener === undefined
      ? undefined
      : (await import('./egress/process-egress.js')).createProcessEgress({
          config: config.egressListener,
          engine: ingressConfig,
          extProc: config.extProc,
          stages,
          decider: egressCache.decider,
          signals: egressCache.signals,
          log,
          guard,
          counters,
          registry: metrics.registry,
          accessLog,
          admission: connectionGate,
        });
  const tunnelStage: ProxyStage = { stats: () => ({ tunnels: hub.stats.snapshot() }), resetStats: () => hub.stats.reset() };
  const overloadStage: ProxyStage = { stats: () => ({ overload: overloadStats.snapshot() }), resetStats: () => overloadStats.reset() };
  const offloadStage: ProxyStage = { stats: () => ({ filterOffload: offloadStats.snapshot() }), resetStats: () => offloadStats.reset() };
  /** Set at SIGTERM: /ready answers 503 for `--drain-delay-ms` before the drain starts. */
  let readinessFailed = false;
  const admin: FastifyInstance = await createAdmin({
    adminToken: ops.adminToken,
    stats,
    registry: metrics.registry,
    stages: [...stages, tunnelStage, overloadStage, offloadStage, ...(egress === undefined ? [] : [egress.stage])],
    draining: () => readinessFailed || ingress.draining,
    resolverHealth: resolverHealthTarget(config, stages),
    readinessChecks: [overload],
    reload,
    log,
    accessLog,
    guard,
    history,
  });
  if (opts.role === 'worker') {
    admin.get('/internal/metrics.json', async () => metrics.registry.getMetricsAsJSON());
  }

  // Each bind that fails names its address and the flag that moves it (lib/listen-error.ts); what was started
  // before it is let go, so a caller that goes on (a test, a supervisor) is not left with timers and channels.
  const bind = (flag: string, at: HostPort, listen: () => Promise<unknown>): Promise<unknown> => listening('proxy', at.host, at.port, settingOf(PROXY_FLAGS, flag), listen);
  const adminAt = opts.role === 'worker' ? { host: '127.0.0.1', port: 0 } : ops.admin;
  const { tls: tlsAt, connect: connectAt, connectTls: connectTlsAt } = listeners;
  const egressAt = config.egressListener?.listen;
  const release = async (): Promise<void> => {
    egress?.listener.closeAll();
    await Promise.all([ingress.stopAccepting(), connect?.stopAccepting(), connectTls?.stopAccepting(), egress?.listener.stopAccepting()]);
    egress?.close();
    router.close();
    overload.stop();
    await Promise.all([pools.destroy(), h2Sessions.destroy()]);
    upstreamTls?.close();
    certificateExpiry.close();
    for (const stage of stages) await stage.close?.();
    await offload.close();
    await admin.close();
    await tracing?.shutdown().catch(() => undefined);
    accessLog.close();
  };
  try {
    await bind('listen', listeners.listen, () => ingress.listen(listeners.listen.host, listeners.listen.port));
    if (tlsAt !== undefined) await bind('tls-listen', tlsAt.listen, () => ingress.listenTls(tlsAt.listen.host, tlsAt.listen.port, tlsAt));
    if (connect !== undefined && connectAt !== undefined) await bind('connect-listen', connectAt, () => connect.listen(connectAt.host, connectAt.port));
    if (connectTls !== undefined && connectTlsAt !== undefined) await bind('connect-tls-listen', connectTlsAt.listen, () => connectTls.listen(connectTlsAt.listen.host, connectTlsAt.listen.port));
    if (egress !== undefined && egressAt !== undefined) await bind('egress-listen', egressAt, () => egress.listener.listen(egressAt.host, egressAt.port));
    await bind('admin', adminAt, () => admin.listen({ host: adminAt.host, port: adminAt.port }));
  } catch (err) {
    await release().catch(() => undefined);
    throw err;
  }
  const tlsListener = ingress.tlsListener;
  const addresses = {
    ingress: boundAddress(ingress.listener.server),
    ...(tlsListener === undefined ? {} : { tls: boundAddress(tlsListener.server) }),
    admin: boundAddress(admin.server),
    ...(connect === undefined ? {} : { connect: boundAddress(connect.server) }),
    ...(connectTls === undefined ? {} : { connectTls: boundAddress(connectTls.server) }),
    ...(egress === undefined ? {} : { egress: boundAddress(egress.listener.server) }),
  };
  // The gateway never tunnels an actor into the proxy itself, whatever its policy allows.
  if (egress !== undefined) for (const address of Object.values(addresses)) ownListener(egress.listener.forbidden, address);
  const stopAccepting = (): void => {
    void ingress.stopAccepting();
    void connect?.stopAccepting();
    void connectTls?.stopAccepting();
    void egress?.listener.stopAccepting();
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      readinessFailed = true;
      // A cluster worker is told to drain by its primary, which waits out the delay itself (cluster/supervisor.ts).
      if (opts.role === 'standalone' && ops.drainDelayMs > 0) {
        log.info({ drainDelayMs: ops.drainDelayMs }, 'readiness failed: serving until the drain starts');
        await new Promise((resolve) => setTimeout(resolve, ops.drainDelayMs));
      }
      log.info({ inflight: ingress.inflight, drainTimeoutMs: ops.drainTimeoutMs }, 'draining');
      void connect?.stopAccepting();
      void connectTls?.stopAccepting();
      // Open tunnels keep flowing until the drain timeout, then are closed; the ingress waits for their sockets.
      const tunnels = hub.drain(ops.drainTimeoutMs);
      // Egress tunnels the same: no new CONNECT from now on, the open ones closed at the end of the drain.
      const egressTunnels = egress?.listener.drain(ops.drainTimeoutMs) ?? Promise.resolve(true);
      const clean = (await Promise.all([ingress.drain(ops.drainTimeoutMs), tunnels, egressTunnels])).every(Boolean);
      if (!clean) log.warn({ inflight: ingress.inflight }, 'drain timeout: closing remaining connections');
      router.close();
      overload.stop();
      history.stop();
      await Promise.all([pools, h2Sessions].map((p) => (clean ? p.close() : p.destroy())));
      upstreamTls?.close();
      certificateExpiry.close();
      egress?.close();
      for (const stage of stages) await stage.close?.();
      await offload.close();
      await admin.close();
      await tracing?.shutdown().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'tracing: spans not exported at shutdown'));
      accessLog.close();
      log.info('stopped');
    })());

  // Which user filters run, in order, said before "ready": a filter that was not picked up shows here.
  const userFilters = loadedFilters(config.chain.filters, chain.filters);
  log.info({ filters: userFilters }, `filter chain: ${describeFilters(userFilters)}`);
  if (opts.role === 'standalone') {
    process.on('SIGHUP', () => void reload()); // the reloader logs the outcome
    onShutdownSignal(log, stop);
    logReady(log, addresses);
  }
  // Log rotation: the access-log file is opened again (a cluster worker is told by its primary, which got the signal).
  if (opts.role === 'standalone') process.on('SIGUSR1', () => accessLog.reopen());
  log.debug({ filters: chain.filters.map((f) => f.name), listen: formatHostPort(listeners.listen.host, listeners.listen.port) }, 'chain assembled');
  return { ...addresses, stopAccepting, close: stop, reload, reopenAccessLog: () => accessLog.reopen() };
}

/** Registers a bound `host:port` (IPv6 in brackets) as one of the proxy's own listeners. */
function ownListener(forbidden: ForbiddenDestinations, address: string): void {
  const { host, port } = parseHostPort(address, 'a bound listener');
  forbidden.addOwnListener(host, port);
}
