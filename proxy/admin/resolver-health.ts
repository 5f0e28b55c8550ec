/**
 * The proxy's readiness check: a gRPC health check of whoever resolves its cache misses, the ext_proc server
 * (service '' : the server as a whole) or, with `--resolver apiserver`, the control plane (`ateapi.Control`).
 * A proxy whose resolver does not answer can serve only cached bindings, so it is not ready.
 *
 * The check runs on the resolver stage's own channel when the stage offers it (ext_proc: the very connection,
 * and the mTLS, its streams use, following a credential rotation); otherwise on a client with the resolver
 * channel's own options, so grpc-js checks over the same pooled connection the requests use. A server without the health service (UNIMPLEMENTED) counts as answering: the check then proves
 * only that the server is reachable and responsive. A control-plane outage behind a healthy ext_proc server does
 * not make the proxy unready (it would take every replica out at once while hits still work): extproc's own
 * `/ready` reports it.
 */
import { formatHostPort, type HostPort } from '../../lib/address.js';
import { CONTROL_CHANNEL_OPTIONS } from '../../lib/resume/control-client.js';
import { createHealthClient, WHOLE_SERVER, type HealthClient } from '../../lib/grpc-health.js';
import { HealthProbe, type ReadinessCheck } from '../../lib/health-probe.js';
import type { Registry } from 'prom-client';
import type { Logger } from '../../lib/logger.js';
import { samplesBy, scrapedCounterBy, scrapedGauge } from '../../lib/prom-metrics.js';
import { PROXY_METRIC_PREFIX as P } from '../ops/metrics.js';
import { CONTROL_SERVICE } from '../../lib/wire-contract.js';
import { CHANNEL_OPTIONS as EXT_PROC_CHANNEL_OPTIONS } from '../stages/ext-proc/grpc-client.js';
import type { ResolverConfig } from '../stages/apiserver/config.js';
import type { HealthCheckConfig } from './config.js';

/** What `/ready` checks: the resolver in use (`--resolver`), its address, and how often. */
export interface ResolverHealthTarget {
  readonly kind: ResolverConfig['kind'];
  /** `--extproc` for `extproc`, `--apiserver` for `apiserver`. */
  readonly address: HostPort;
  readonly check: HealthCheckConfig;
  /**
   * The resolver stage's health client on its own channel (`ProxyStage.healthClient`: the ext_proc channel, with
   * its mTLS); absent: a plaintext client of the probe's own, with the channel's options.
   */
  readonly client?: () => HealthClient;
}

/** `log`: where the check's changes (not ready: why; ready again) are logged. */
export function resolverHealthProbe(target: ResolverHealthTarget, log?: Logger): HealthProbe {
  const extproc = target.kind === 'extproc';
  const address = formatHostPort(target.address.host, target.address.port);
  return new HealthProbe({
    name: extproc ? `ext_proc ${address}` : `control plane ${address}`,
    client: target.client ?? createHealthClient(address, { channelOptions: extproc ? EXT_PROC_CHANNEL_OPTIONS : CONTROL_CHANNEL_OPTIONS }),
    service: extproc ? WHOLE_SERVER : CONTROL_SERVICE,
    intervalMs: target.check.intervalMs,
    timeoutMs: target.check.timeoutMs,
    onChange: (state) => {
      if (state.kind === 'failing') log?.warn({ reason: state.reason }, 'not ready: the resolver does not answer health checks');
      else if (state.kind === 'ok') log?.info({ resolver: address }, 'ready: the resolver answers health checks');
    },
  });
}

/**
 * `actor_edge_proxy_ready` (1 while `/ready` answers 200; merged over cluster workers as the lowest) and
 * `actor_edge_proxy_resolver_health_checks_total{result}`.
 */
export function registerReadinessMetrics(registry: Registry, probe: HealthProbe, draining: () => boolean, more: readonly ReadinessCheck[] = []): void {
  const checks = [probe, ...more];
  scrapedGauge(registry, {
    name: `${P}ready`,
    help: '1 while /ready answers 200 (not draining, the resolver answering its health checks, not overloaded), else 0.',
    aggregator: 'min',
    read: () => (!draining() && checks.every((c) => c.state().kind === 'ok') ? 1 : 0),
  });
  scrapedCounterBy(registry, {
    name: `${P}resolver_health_checks_total`,
    help: 'gRPC health checks of the resolver (the ext_proc server, or the control plane with --resolver apiserver), by result: ok, failed.',
    labelNames: ['result'],
    read: () => samplesBy('result', probe.counts),
  });
}
