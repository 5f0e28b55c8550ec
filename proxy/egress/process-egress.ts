/**
 * The egress listener as one proxy process runs it (`proxy-process.ts`): made when `--egress-listen` is set, on the
 * ext_proc channel the resolver stage already has (same credentials; a channel of its own when the resolver is not
 * ext_proc), with its metrics, its `/stats` block (`egressTunnels`), and its part of the drain. Its grants hear
 * `signals` (a revoke through `POST /egress/revoke` included, `egress-cache-stage.ts`).
 */
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { formatHostPort } from '../../lib/address.js';
import type { AccessLog } from '../ops/access-log.js';
import type { ProxyContainment } from '../ops/containment.js';
import type { Counters } from '../ops/stats.js';
import type { ConnectionAdmission } from '../edge/listeners.js';
import type { ExtProcStageConfig } from '../stages/ext-proc/config.js';
import type { ExtProcClient } from '../stages/ext-proc/client.js';
import { GrpcExtProcClient } from '../stages/ext-proc/grpc-client.js';
import type { ProxyStage } from '../stages/stage.js';
import type { EgressListenerConfig } from './config.js';
import type { EgressDecider } from './egress-decider.js';
import { registerEgressMetrics } from './egress-metrics.js';
import type { GrantSignals } from './grant-signals.js';
import { EgressListener, type EgressEngineSettings } from './listener.js';

export interface ProcessEgressDeps {
  readonly config: EgressListenerConfig;
  readonly engine: EgressEngineSettings;
  readonly extProc: ExtProcStageConfig;
  readonly stages: readonly ProxyStage[];
  /** The verdict cache's decider (`egress-cache-stage.ts`; with `--egress-cache off`, every CONNECT through ext_proc). */
  readonly decider: EgressDecider;
  /** What the grants hear (`egress-cache-stage.ts`). */
  readonly signals: GrantSignals;
  readonly log: Logger;
  readonly guard: ProxyContainment;
  readonly counters: Counters;
  readonly registry: Registry;
  readonly accessLog: AccessLog;
  readonly admission: ConnectionAdmission;
}

export interface ProcessEgress {
  readonly listener: EgressListener;
  /** Its `/stats` block. */
  readonly stage: ProxyStage;
  /** Lets go of what it made itself (its own ext_proc channel), after the drain. */
  close(): void;
}

export function createProcessEgress(deps: ProcessEgressDeps): ProcessEgress {
  const shared = deps.stages.find((s) => s.extProcClient !== undefined)?.extProcClient;
  let own: GrpcExtProcClient | undefined;
  const extProc: ExtProcClient =
    shared ??
    (own = new GrpcExtProcClient({
      address: formatHostPort(deps.extProc.address.host, deps.extProc.address.port),
      messageTimeoutMs: deps.extProc.settings.messageTimeoutMs,
      maxMessageTimeoutMs: deps.extProc.settings.maxMessageTimeoutMs,
      counters: deps.counters,
      tls: deps.extProc.tls,
      log: deps.log,
      guard: deps.guard,
    }));
  let listener: EgressListener;
  try {
    listener = new EgressListener({
      config: deps.config,
      engine: deps.engine,
      decider: deps.decider,
      signals: deps.signals,
      extProc,
      guard: deps.guard,
      log: deps.log,
      accessLog: deps.accessLog,
      admission: deps.admission,
    });
  } catch (err) {
    own?.close();
    throw err;
  }
  registerEgressMetrics(deps.registry, listener.stats);
  return {
    listener,
    stage: { stats: () => ({ egressTunnels: listener.stats.snapshot() }), resetStats: () => listener.stats.reset() },
    close: () => own?.close(),
  };
}
