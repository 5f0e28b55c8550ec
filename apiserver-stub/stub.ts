/**
 * Starts the whole apiserver-stub: the control plane (gRPC ateapi.Control + atestub.Workers on one port, or
 * atestub.Workers on its own `--attach-listen` port so workers need not reach the control API), the admin API,
 * and the in-process workers, which attach over the stub's own attach port exactly like separate worker
 * processes do. Returns the bound addresses and a close() that stops everything in order.
 *
 * With `--tls-credential-bundle` ateapi.Control is served over TLS and every client must present a certificate
 * signed by `--tls-client-ca`. atestub.Workers/Attach is the simulation's own wiring and stays plaintext: without
 * `--attach-listen` it then moves to a loopback port of its own (reported as `attach`).
 */
import { watchCertificates } from '../lib/tls/expiry.js';
import * as grpc from '@grpc/grpc-js';
import { formatHostPort, boundAddress } from '../lib/address.js';
import type { Logger } from '../lib/logger.js';
import type { Readiness } from '../lib/ops-routes.js';
import { HealthServer, WHOLE_SERVER } from '../lib/grpc-health.js';
import { CONTROL_SERVICE } from '../lib/wire-contract.js';
import { buildAdmin } from './admin.js';
import { guardAdmin } from '../lib/admin-guard.js';
import { workersServiceDefinition } from './atestub-types.js';
import { Churn } from './churn.js';
import { Destinations } from './destinations.js';
import { ActorCertificates, checkActorCaDir } from './actor-certificates.js';
import { actorCaFiles } from '../lib/tls/actor-certs.js';
import { STUB_FLAGS, type StubConfig } from './config.js';
import { assertFree, listening, settingOf, type ListenSetting } from '../lib/listen-error.js';
import { ControlPlane } from './control-plane.js';
import { controlHandlers, controlServiceDefinition } from './control-service.js';
import { ipv4Add } from './ip.js';
import { RpcCounters } from './rpc-counters.js';
import { seedActors } from './seed.js';
import { Store } from './store.js';
import { WorkerAgent } from './worker/agent.js';
import { startWorkerTls, WorkerTlsCounters } from './worker/tls.js';
import { readCredentialBundle, readTrustBundle, TlsFileError } from '../lib/tls/files.js';
import { UsageError } from '../lib/flags.js';
import { WorkersService } from './workers-service.js';

export interface RunningStub {
  /** `attach` is where workers attach (the `grpc` address unless --attach-listen is given). */
  /** Also `destination-1` … when `--destinations` started some. */
  readonly addresses: { readonly grpc: string; readonly attach: string; readonly admin: string; readonly workers: string; readonly [destination: string]: string };
  readonly workerAddresses: readonly string[];
  readonly cp: ControlPlane;
  readonly agents: readonly WorkerAgent[];
  close(): Promise<void>;
}

/** Where in-process workers dial the stub's own gRPC listener. */
function dialAddress(host: string, port: number): string {
  if (host === '0.0.0.0') return formatHostPort('127.0.0.1', port);
  if (host === '::') return formatHostPort('::1', port);
  return formatHostPort(host, port);
}

/** Binds `at`; a port that cannot be bound is a ListenError naming `setting`. */
async function bind(server: grpc.Server, at: { host: string; port: number }, setting: ListenSetting, credentials = grpc.ServerCredentials.createInsecure()): Promise<number> {
  await assertFree('apiserver-stub', at.host, at.port, setting);
  return listening('apiserver-stub', at.host, at.port, setting, () => new Promise<number>((resolve, reject) => {
    server.bindAsync(formatHostPort(at.host, at.port), credentials, (err, port) => (err ? reject(err) : resolve(port)));
  }));
}

/** TLS server credentials that require a client certificate; a missing or unusable file is a UsageError. */
function controlCredentials(tls: NonNullable<StubConfig['tls']>): grpc.ServerCredentials {
  try {
    const bundle = readCredentialBundle(tls.credentialBundle, '--tls-credential-bundle');
    const ca = readTrustBundle(tls.clientCa, '--tls-client-ca');
    return grpc.ServerCredentials.createSsl(Buffer.from(ca), [{ cert_chain: Buffer.from(bundle.cert), private_key: Buffer.from(bundle.key) }], true);
  } catch (err) {
    if (err instanceof TlsFileError) throw new UsageError(err.message);
    throw err;
  }
}

/** Lets open calls finish for up to 2 s, then forces the server down. */
function shutdown(server: grpc.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, 2000);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const GRPC_SERVER_OPTIONS = { 'grpc.keepalive_time_ms': 10_000, 'grpc.keepalive_timeout_ms': 5_000 };

export async function startApiserverStub(config: StubConfig, log: Logger): Promise<RunningStub> {
  await checkActorCaDir(config.actorCaDir);
  const store = new Store();
  const cp = new ControlPlane(store, { resolveLatencyMs: config.resolveLatencyMs, readLatencyMs: config.readLatencyMs, coldResumeMs: config.coldResumeMs, autoCreate: config.autoCreate }, log);
  seedActors(store, config.atespace, config.actors, cp.egress, config.egressSeed);
  const counters = new RpcCounters();
  const churn = new Churn(cp, log);

  const credentials = config.tls === undefined ? undefined : controlCredentials(config.tls);
  const workerTls = config.workerTls === undefined ? undefined : startWorkerTls(config.workerTls, log, new WorkerTlsCounters());
  const server = new grpc.Server(GRPC_SERVER_OPTIONS);
  server.addService(controlServiceDefinition(), controlHandlers(cp, counters));
  let readiness: Readiness = 'not-ready';
  // The gRPC health service on the control listener: SERVING unless closing or in an admin-set outage.
  const health = new HealthServer((service) =>
    service === WHOLE_SERVER || service === CONTROL_SERVICE ? (readiness !== 'draining' && cp.outageUntil <= Date.now() ? 'SERVING' : 'NOT_SERVING') : undefined,
  );
  health.addTo(server);
  const ownAttachListener = config.attachListen !== undefined || credentials !== undefined;
  const attachServer = ownAttachListener ? new grpc.Server(GRPC_SERVER_OPTIONS) : server;
  const workersService = new WorkersService(cp, counters, log);
  attachServer.addService(workersServiceDefinition(), { Attach: workersService.attach });
  const grpcPort = await bind(server, config.listen, settingOf(STUB_FLAGS, 'listen'), credentials);
  const grpcAddress = formatHostPort(config.listen.host, grpcPort);
  const attachAt = config.attachListen ?? (credentials === undefined ? { host: config.listen.host, port: grpcPort } : { host: '127.0.0.1', port: 0 });

  const certificateExpiry = watchCertificates(
    [
      { what: '--tls-credential-bundle', file: config.tls?.credentialBundle ?? '' },
      { what: '--tls-client-ca', file: config.tls?.clientCa ?? '' },
      { what: '--worker-tls-credential-bundle', file: config.workerTls?.credentialBundle ?? '' },
      { what: '--worker-tls-client-ca', file: config.workerTls?.clientCa ?? '' },
      { what: '--actor-ca-dir', file: config.actorCaDir === undefined ? '' : actorCaFiles(config.actorCaDir).certFile },
    ],
    { warningHours: config.certExpiryWarningHours, log },
  );

  const actorCertificates = new ActorCertificates(config.actorCaDir);
  const admin = buildAdmin({ cp, counters, churn, readiness: () => readiness, certificateExpiry, log, actorCertificates, ...(workerTls === undefined ? {} : { workerTls: workerTls.counters }) });
  guardAdmin(admin, { token: config.adminToken });
  const agents: WorkerAgent[] = [];
  let destinations: Destinations | undefined;
  const closeAll = async (): Promise<void> => {
    readiness = 'draining';
    health.close();
    cp.closing = true;
    churn.stop();
    await Promise.all(agents.map((a) => a.close()));
    await admin.close();
    workersService.endAll();
    await Promise.all([...new Set([server, attachServer])].map(shutdown));
    workerTls?.close();
    certificateExpiry.close();
    await destinations?.close();
  };

  try {
    const attachPort = attachServer === server ? grpcPort : await bind(attachServer, attachAt, settingOf(STUB_FLAGS, 'attach-listen'));
    const attachAddress = formatHostPort(attachAt.host, attachPort);
    await listening('apiserver-stub', config.admin.host, config.admin.port, settingOf(STUB_FLAGS, 'admin'), () => admin.listen({ host: config.admin.host, port: config.admin.port }));
    const adminAddress = boundAddress(admin.server);
    const apiserver = dialAddress(attachAt.host, attachPort);
    for (let i = 0; i < config.workers; i++) {
      agents.push(
        new WorkerAgent({
          apiserver,
          advertiseIp: ipv4Add(config.workerIpBase, i),
          port: config.workerPort,
          capacity: config.workerCapacity,
          actorSuffix: config.actorSuffix,
          log,
          ...(workerTls === undefined ? {} : { tls: workerTls }),
        }),
      );
    }
    await Promise.all(agents.map((a) => a.start()));
    await Promise.all(agents.map((a) => a.whenAttached()));
    destinations = config.destinations.length === 0 ? undefined : await Destinations.start(config.destinations);
    readiness = 'live';
    const workerAddresses = agents.map((a) => a.listener.address);
    const workers =
      config.workers === 0
        ? 'none'
        : config.workers === 1
          ? workerAddresses[0]!
          : `${agents[0]!.ip}-${agents[agents.length - 1]!.ip}:${config.workerPort}`;
    return { addresses: { grpc: grpcAddress, attach: attachAddress, admin: adminAddress, workers, ...destinations?.addresses() }, workerAddresses, cp, agents, close: closeAll };
  } catch (err) {
    await closeAll().catch(() => undefined);
    throw err;
  }
}
