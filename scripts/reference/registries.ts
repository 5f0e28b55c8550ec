/**
 * Every metric the components register, read from their own prom-client registries, built as the processes build
 * them (the proxy's twice: with the production resolver and with `--resolver apiserver`). What
 * docs/reference/metrics.md is generated from, and what the shipped dashboard and alerts are checked against.
 */
import { pino } from 'pino';
import type { Registry } from 'prom-client';
import { proxyConfigOf } from '../../proxy/config.js';
import { Counters } from '../../proxy/ops/stats.js';
import { createProxyMetrics } from '../../proxy/ops/metrics.js';
import { registerReadinessMetrics, resolverHealthProbe } from '../../proxy/admin/resolver-health.js';
import { registerTunnelMetrics } from '../../proxy/ops/tunnel-metrics.js';
import { registerEgressMetrics } from '../../proxy/egress/egress-metrics.js';
import { EgressStats } from '../../proxy/egress/egress-stats.js';
import { EgressTunnels } from '../../proxy/egress/tunnels.js';
import { TunnelHub } from '../../proxy/tunnels/hub.js';
import { assembleStages } from '../../proxy/stages/assemble.js';
import { resolverHealthTarget, stagesConfig } from '../../proxy/proxy-process.js';
import { createEgressStage } from '../../proxy/egress/egress-cache-stage.js';
import { ExtprocMetrics } from '../../extproc/metrics.js';
import { ParkingLot } from '../../lib/resume/parking-lot.js';
import type { HandshakeCounts } from '../../lib/tls/grpc-mtls-server.js';
import { createStubMetrics } from '../../apiserver-stub/metrics.js';
import { ControlPlane } from '../../apiserver-stub/control-plane.js';
import { Store } from '../../apiserver-stub/store.js';
import { RpcCounters } from '../../apiserver-stub/rpc-counters.js';
import { WorkerTlsCounters } from '../../apiserver-stub/worker/tls.js';
import { startProxyCertificateExpiry } from '../../proxy/ops/certificates.js';
import { startCertificateExpiry } from '../../lib/tls/expiry.js';
import { OverloadManager } from '../../proxy/ops/overload/manager.js';
import { OverloadTallies } from '../../proxy/ops/overload/tallies.js';
import { registerOverloadMetrics } from '../../proxy/ops/overload/metrics.js';
import { registerOffloadMetrics } from '../../proxy/chain/offload/offload-metrics.js';
import { OffloadPool } from '../../proxy/chain/offload/offload-pool.js';
import { ReplayBudget } from '../../proxy/request/replay-budget.js';
import { BodyBudget } from '../../proxy/request/body-budget.js';

const silent = pino({ level: 'silent' });
/** A certificate file name for the registries' expiry gauges (never read: it is not there). */
const NO_FILE = '/nonexistent/actor-edge-reference.pem';

export interface DeclaredMetric {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly labelNames: readonly string[];
}

export interface ComponentRegistry {
  /** The component as the CLI names it. */
  readonly component: 'proxy' | 'extproc' | 'apiserver-stub';
  /** What this registry was built with, when a component is built more than once (`--resolver apiserver`). */
  readonly variant?: string;
  readonly metrics: readonly DeclaredMetric[];
}

function declared(registry: Registry): DeclaredMetric[] {
  return registry.getMetricsAsArray().map((m) => {
    const metric = m as unknown as { name: string; help: string; type: string; labelNames?: readonly string[] };
    return { name: metric.name, type: metric.type, help: metric.help, labelNames: [...(metric.labelNames ?? [])] };
  });
}

/** Every component's registry, each metric with its type, help and label names. */
export async function componentRegistries(): Promise<ComponentRegistry[]> {
  const out: ComponentRegistry[] = [];
  const closers: (() => unknown)[] = [];
  try {
    for (const [variant, args] of [[undefined, ['--actor-cache', 'on']], ['--resolver apiserver', ['--actor-cache', 'on', '--resolver', 'apiserver']]] as const) {
      const config = proxyConfigOf(['--extproc', '127.0.0.1:1', '--apiserver', '127.0.0.1:1', ...args], {});
      const counters = new Counters(config.chain.rerun.maxReruns);
      const metrics = createProxyMetrics(counters);
      const stages = await assembleStages({ config: stagesConfig(config), log: silent, registry: metrics.registry, counters });
      closers.push(...stages.map((s) => () => s.close?.()));
      const egress = createEgressStage(config.egressCache, { registry: metrics.registry, channel: null });
      closers.push(() => egress.close());
      registerTunnelMetrics(metrics.registry, new TunnelHub(silent).stats);
      // As a process with --egress-listen registers them.
      registerEgressMetrics(metrics.registry, new EgressStats(new EgressTunnels(1)));
      const manager = new OverloadManager({ triggers: config.overload.triggers, tallies: new OverloadTallies(), log: silent });
      registerOverloadMetrics(metrics.registry, {
        manager,
        budget: new ReplayBudget(config.overload.replayBufferBudgetBytes),
        bodyBudget: new BodyBudget(config.overload.bodyInflightBudgetBytes),
        maxConnections: config.overload.maxConnections,
        extprocQueue: { maxStreams: config.extProc.maxStreams, maxWaiting: config.extProc.queueMaxWaiting, timeoutMs: config.extProc.queueTimeoutMs },
      });
      registerOffloadMetrics(metrics.registry, await OffloadPool.start(config.chain.offload)); // 0 workers: no threads
      const probe = resolverHealthProbe(resolverHealthTarget(config));
      closers.push(() => probe.stop());
      registerReadinessMetrics(metrics.registry, probe, () => false);
      // As a process that loads a certificate registers it (the file is only read, when it is there).
      const expiry = startProxyCertificateExpiry({ servingCert: NO_FILE, upstream: undefined, extProc: undefined }, 0, silent, metrics.registry);
      closers.push(() => expiry.close());
      out.push({ component: 'proxy', ...(variant === undefined ? {} : { variant }), metrics: declared(metrics.registry) });
    }
    // As extproc with mTLS on its listener builds them (the handshake counter exists only then).
    const extproc = new ExtprocMetrics(() => new ParkingLot(1), () => ({}) as HandshakeCounts);
    const extprocExpiry = startCertificateExpiry('extproc', [{ what: '--tls-credential-bundle', file: NO_FILE }], { warningHours: 0, log: silent, registry: extproc.registry });
    closers.push(() => extprocExpiry.close());
    out.push({ component: 'extproc', metrics: declared(extproc.registry) });
    const cp = new ControlPlane(new Store(), { resolveLatencyMs: 0, readLatencyMs: 0, coldResumeMs: 0, autoCreate: false }, silent);
    const stub = createStubMetrics(cp, new RpcCounters(), new WorkerTlsCounters());
    const stubExpiry = startCertificateExpiry('apiserver-stub', [{ what: '--tls-credential-bundle', file: NO_FILE }], { warningHours: 0, log: silent, registry: stub });
    closers.push(() => stubExpiry.close());
    out.push({ component: 'apiserver-stub', metrics: declared(stub) });
  } finally {
    for (const close of closers) await close();
  }
  return out;
}

/** Every metric any component registers → its label names. */
export async function exportedMetrics(): Promise<Map<string, readonly string[]>> {
  const out = new Map<string, readonly string[]>();
  for (const r of await componentRegistries()) for (const m of r.metrics) out.set(m.name, m.labelNames);
  return out;
}
