/**
 * Starts extproc in this process: the ExternalProcessor gRPC server (with the gRPC health service), the admin
 * server, one control-plane client (one channel, reused by every request), the per-actor resume flights, the egress
 * mode (CONNECTs answered from GetActor and the actor's egress policy, on the same channel), and the control plane's
 * health check over that same channel.
 *
 * Readiness (`/ready`, and the health service): extproc is ready while it serves and its control plane answers
 * health checks. The health service reports `""` (the server) SERVING while it serves, and
 * `envoy.service.ext_proc.v3.ExternalProcessor` SERVING only while it is also ready: a data plane that checks the
 * server stays up through a control-plane outage (hits need no control plane), one that checks the service does not.
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { boundAddress, formatHostPort } from '../lib/address.js';
import { createControlClient, resumeActorOnce, type ControlClient } from '../lib/resume/control-client.js';
import { grpcCodeName } from '../lib/wire-contract.js';
import { ResumeFlights } from '../lib/resume/flight.js';
import { readinessReport, type Phase } from '../lib/readiness.js';
import { createHealthClient, HealthServer, WHOLE_SERVER, type ServingStatus } from '../lib/grpc-health.js';
import { HealthProbe } from '../lib/health-probe.js';
import { CONTROL_SERVICE, EXT_PROC_SERVICE } from '../lib/wire-contract.js';
import { buildAdmin } from './admin.js';
import { guardAdmin } from '../lib/admin-guard.js';
import { EXTPROC_FLAGS, type ExtprocConfig } from './config.js';
import { assertFree, listening, settingOf } from '../lib/listen-error.js';
import { ExtprocMetrics } from './metrics.js';
import { externalProcessorServerDefinition, type ProcessCall } from './protocol.js';
import { Resolver } from './resolver.js';
import { EgressResolver } from './egress/egress-resolver.js';
import { ControlReads } from './egress/control-reads.js';
import { ThrottledWarnings } from '../lib/throttled-warnings.js';
import { serveStream } from './stream.js';
import { ReloadingTlsCredentials, type ClientTlsFiles } from '../lib/tls/grpc-client-credentials.js';
import { TlsFileError } from '../lib/tls/files.js';
import { MtlsGrpcListener, type MtlsServerSettings } from '../lib/tls/grpc-mtls-server.js';
import { startCertificateExpiry, type CertificateSource } from '../lib/tls/expiry.js';
import { UsageError } from '../lib/flags.js';
import { loadTracing } from '../lib/tracing/load.js';
import { tracedResume } from './spans.js';

/** TLS 1.3 to the control plane with extproc's client certificate (files read on every handshake), or plaintext. */
function controlCredentials(files: ClientTlsFiles | undefined, log: Logger): grpc.ChannelCredentials | undefined {
  if (files === undefined) return undefined;
  try {
    const credentials = new ReloadingTlsCredentials(
      files,
      (err) => log.error({ err: err.message }, 'control-plane TLS credentials not re-read; the previous ones stay in use'),
      { caFile: '--apiserver-ca', credentialBundle: '--apiserver-credential-bundle' },
    );
    log.info({ serverName: files.serverName }, 'TLS 1.3 with a client certificate to the control plane');
    return credentials;
  } catch (err) {
    if (err instanceof TlsFileError) throw new UsageError(err.message);
    throw err;
  }
}

/** The ext_proc listener's mTLS (a missing or unusable file stops the start, naming the flag). */
function mtlsListener(server: grpc.Server, settings: MtlsServerSettings, log: Logger): MtlsGrpcListener {
  try {
    return new MtlsGrpcListener(server, settings, log, { credentialBundle: '--tls-credential-bundle', clientCa: '--tls-client-ca' });
  } catch (err) {
    if (err instanceof TlsFileError) throw new UsageError(err.message);
    throw err;
  }
}

function bindPlaintext(server: grpc.Server, address: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port)));
  });
}

/** Every file of certificates extproc loads, by its flag. */
function certificateSources(config: ExtprocConfig): CertificateSource[] {
  return [
    { what: '--tls-credential-bundle', file: config.listenTls?.credentialBundle ?? '' },
    { what: '--tls-client-ca', file: config.listenTls?.clientCa ?? '' },
    { what: '--apiserver-credential-bundle', file: config.apiserverTls?.credentialBundle ?? '' },
    { what: '--apiserver-ca', file: config.apiserverTls?.caFile ?? '' },
  ];
}

export interface RunningExtproc {
  /** The bound gRPC address, `host:port`. */
  readonly grpcAddress: string;
  /** The bound admin address, `host:port`. */
  readonly adminAddress: string;
  readonly metrics: ExtprocMetrics;
  readonly flights: ResumeFlights;
  /** Stops accepting streams, lets open ones finish (up to CLOSE_GRACE_MS), closes everything. */
  close(): Promise<void>;
}

/** How long open streams may take to finish once extproc is closing. */
export const CLOSE_GRACE_MS = 5000;

/** A ResumeActor call's own deadline: only a backstop against a control plane that never answers. */
export function attemptBackstopMs(budgetMs: number): number {
  return Math.max(60_000, 2 * budgetMs);
}

export async function startExtproc(config: ExtprocConfig, log: Logger): Promise<RunningExtproc> {
  // channelz bookkeeping costs CPU on every stream and nothing here reads it.
  const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
  const listener = config.listenTls === undefined ? undefined : mtlsListener(server, config.listenTls, log);
  const control: ControlClient = createControlClient(config.apiserver, {}, controlCredentials(config.apiserverTls, log));
  const backstop = attemptBackstopMs(config.resumeBudgetMs);
  const tracing = config.tracing.enabled ? await loadTracing(config.tracing, 'extproc', log) : undefined;
  const tracer = tracing?.tracer;
  let metrics: ExtprocMetrics | undefined;
  const flights = new ResumeFlights({
    attempt: (ref, parent) =>
      tracer === undefined || parent === undefined
        ? resumeActorOnce(control, ref, backstop)
        : tracedResume(tracer, parent, ref, (metadata) => resumeActorOnce(control, ref, backstop, metadata)),
    budgetMs: config.resumeBudgetMs,
    ...(config.parking === undefined ? {} : { parking: config.parking }),
    parkedMax: config.parkedMax,
    observer: {
      attempt: (result) => metrics?.resumeCall(result.kind === 'ok' ? 'OK' : grpcCodeName(result.code)),
      join: () => metrics?.flightJoin(),
      retry: (code) => metrics?.resumeRetry(grpcCodeName(code)),
      outOfBudget: () => metrics?.outOfBudget(),
    },
  });
  metrics = new ExtprocMetrics(() => flights.lot, listener === undefined ? undefined : () => listener.counts);
  const m = metrics;
  const expiry = startCertificateExpiry('extproc', certificateSources(config), { warningHours: config.certExpiryWarningHours, log, registry: m.registry });
  const resolver = new Resolver({ flights, metrics: m, log, actorSuffix: config.actorSuffix, workerPort: config.workerPort });
  const egress = new EgressResolver({
    reads: new ControlReads(control, { call: (rpc, code) => m.egressControlCall(rpc, code) }),
    metrics: m,
    log,
    warnings: new ThrottledWarnings(log, 10_000),
    timeoutMs: config.egressTimeoutMs,
  });

  let phase: Phase = 'starting';
  // The control plane's health, checked over the control client's own channel (the connection ResumeActor uses).
  const probe = new HealthProbe({
    name: `control plane ${config.apiserver}`,
    client: createHealthClient(config.apiserver, { channel: control.getChannel() }),
    service: CONTROL_SERVICE,
    intervalMs: config.healthCheck.intervalMs,
    timeoutMs: config.healthCheck.timeoutMs,
    ownsClient: false,
    onChange: (state) => {
      if (state.kind === 'failing') log.warn({ reason: state.reason }, 'not ready: the control plane does not answer health checks');
      else if (state.kind === 'ok') log.info('ready: the control plane answers health checks');
    },
  });
  const ready = (): boolean => phase === 'serving' && probe.state().kind === 'ok';
  m.watchHealth({ ready, checks: () => probe.counts });
  const health = new HealthServer((service): ServingStatus | undefined => {
    if (service === WHOLE_SERVER) return phase === 'serving' ? 'SERVING' : 'NOT_SERVING';
    if (service === EXT_PROC_SERVICE) return ready() ? 'SERVING' : 'NOT_SERVING';
    return undefined;
  });

  server.addService(externalProcessorServerDefinition(), {
    Process: (call: ProcessCall) => serveStream(call, { resolver, egress, metrics: m, log, idleTimeoutMs: config.streamIdleTimeoutMs, tracer }),
  });
  // The health service is on the ext_proc port itself, behind the same mTLS as Process.
  health.addTo(server);
  let grpcAddress: string;
  const { host, port } = config.listen;
  const grpcSetting = settingOf(EXTPROC_FLAGS, 'listen');
  if (listener !== undefined) {
    grpcAddress = await listening('extproc', host, port, grpcSetting, () => listener.listen(host, port));
  } else {
    await assertFree('extproc', host, port, grpcSetting);
    grpcAddress = formatHostPort(host, await listening('extproc', host, port, grpcSetting, () => bindPlaintext(server, formatHostPort(host, port))));
    log.warn(
      { listen: grpcAddress },
      'ext_proc listener is plaintext: the request headers of every miss travel unencrypted, and anything that reaches the port can open streams (--tls-credential-bundle and --tls-client-ca turn on mTLS)',
    );
  }

  const admin = buildAdmin(m, () => readinessReport(phase, [probe]), log);
  guardAdmin(admin, { token: config.adminToken });
  try {
    await listening('extproc', config.admin.host, config.admin.port, settingOf(EXTPROC_FLAGS, 'admin'), () => admin.listen({ host: config.admin.host, port: config.admin.port }));
  } catch (err) {
    listener?.close();
    server.forceShutdown();
    control.close();
    expiry.close();
    throw err;
  }
  probe.start();
  phase = 'serving';
  const adminAddress = boundAddress(admin.server);

  let closing: Promise<void> | undefined;
  return {
    grpcAddress,
    adminAddress,
    metrics: m,
    flights,
    close() {
      closing ??= (async () => {
        phase = 'draining';
        probe.stop();
        health.close();
        listener?.close(); // no new connections; open streams finish below
        expiry.close();
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            server.forceShutdown();
            resolve();
          }, CLOSE_GRACE_MS);
          server.tryShutdown(() => {
            clearTimeout(timer);
            resolve();
          });
        });
        await admin.close();
        control.close();
        await tracing?.shutdown().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'tracing: spans not exported at shutdown'));
      })();
      return closing;
    },
  };
}
