/** extproc's flags and its frozen Config (tracing from the standard `OTEL_*` variables): the only place that reads the environment and the config file. */
import net from 'node:net';
import { defineFlagSet, LOG_LEVEL_VARIABLE, UsageError, type FlagSpecs, type FlagValues } from '../lib/flags.js';
import { configFlag } from '../lib/config-file.js';
import { readComponentConfig, type ComponentConfigRead, type ReadOptions } from '../lib/component-config.js';
import type { ClientTlsFiles } from '../lib/tls/grpc-client-credentials.js';
import type { MtlsServerSettings } from '../lib/tls/grpc-mtls-server.js';
import { parseSpiffeMatch } from '../lib/tls/identity.js';
import { DEFAULT_WATCH_INTERVAL_MS } from '../lib/tls/watched.js';
import { devIdentities } from '../lib/tls/dev-certs.js';
import { certExpiryWarningFlag } from '../lib/tls/expiry.js';
import { formatHostPort, parseHostPort, type HostPort } from '../lib/address.js';
import { DEFAULT_ACTOR_SUFFIX, normaliseSuffix } from '../lib/actor-ref.js';
import { DEFAULT_RESUME_BUDGET_MS } from '../lib/wire-contract.js';
import { DEFAULT_PARKED_MAX } from '../lib/resume/flight.js';
import { OTEL_VARIABLES, readTracingConfig, TRACING_OFF, type TracingConfig } from '../lib/tracing/config.js';

/** The service name extproc's spans carry unless `OTEL_SERVICE_NAME` says otherwise. */
export const EXTPROC_SERVICE_NAME = 'actor-edge-extproc';

export const EXTPROC_FLAGS = {
  config: configFlag('EXTPROC_CONFIG', 'extproc'),
  listen: {
    type: 'string',
    env: 'EXTPROC_LISTEN',
    default: '127.0.0.1:50051',
    section: 'grpc',
    help: 'gRPC listen address (Envoy ext_proc v3 ExternalProcessor).',
  },
  'stream-idle-timeout-ms': {
    type: 'number',
    env: 'EXTPROC_STREAM_IDLE_TIMEOUT_MS',
    default: 30000,
    min: 0,
    section: 'grpc',
    help: 'A Process stream on which the data plane neither sends nor half-closes for this long, while nothing is pending, ends with DEADLINE_EXCEEDED; 0 disables. Keep it above the data plane\'s route timeout when it sends response headers.',
  },
  admin: { type: 'string', env: 'EXTPROC_ADMIN', default: '127.0.0.1:9902', section: 'admin', key: 'listen', help: 'Admin HTTP listen address (/ready, /metrics, /stats).' },
  'admin-token': {
    type: 'string?',
    env: 'EXTPROC_ADMIN_TOKEN',
    section: 'admin',
    key: 'token',
    secret: true,
    help: 'When set, every admin call but /ready and /live needs "Authorization: Bearer <token>" (a browser: Basic, the token as the password).',
  },
  apiserver: { type: 'string', env: 'EXTPROC_APISERVER', default: '127.0.0.1:50052', section: 'controlPlane', key: 'address', help: 'Control plane (ateapi.Control) gRPC address.' },
  'apiserver-ca': {
    type: 'string',
    env: 'EXTPROC_APISERVER_CA',
    default: '',
    section: 'controlPlane',
    key: 'ca',
    help: 'PEM file with the CA certificates that sign the control plane\'s certificate: the control-plane connection is then TLS 1.3 with a client certificate (empty: plaintext).',
  },
  'apiserver-credential-bundle': {
    type: 'string',
    env: 'EXTPROC_APISERVER_CREDENTIAL_BUNDLE',
    default: '',
    section: 'controlPlane',
    key: 'credentialBundle',
    help: 'PEM file with extproc\'s client certificate and private key for the control plane; read again on every handshake (rotation without restart).',
  },
  'apiserver-server-name': {
    type: 'string',
    env: 'EXTPROC_APISERVER_SERVER_NAME',
    default: '',
    section: 'controlPlane',
    key: 'serverName',
    help: 'The name the control plane\'s certificate must carry, also sent as SNI (default: the host of --apiserver).',
  },
  'health-check-interval-ms': {
    type: 'number',
    env: 'EXTPROC_HEALTH_CHECK_INTERVAL_MS',
    default: 1000,
    min: 100,
    max: 60000,
    section: 'controlPlane',
    help: 'How often /ready checks the control plane with a gRPC health check (over the control-plane connection).',
  },
  'health-check-timeout-ms': {
    type: 'number',
    env: 'EXTPROC_HEALTH_CHECK_TIMEOUT_MS',
    default: 1000,
    min: 50,
    max: 60000,
    section: 'controlPlane',
    help: 'A health check not answered within this time fails; two failures in a row make /ready answer 503.',
  },
  'resume-budget-ms': {
    type: 'number',
    env: 'EXTPROC_RESUME_BUDGET_MS',
    default: DEFAULT_RESUME_BUDGET_MS,
    min: 1,
    section: 'resume',
    key: 'budgetMs',
    help: 'How long one resume (all retries of it) may take; ABORTED (another operation holds the actor) and UNAVAILABLE (the control plane down for a moment) are retried within it; a data plane that sends its own budget, as the actor-edge proxy does, is answered within that.',
  },
  parking: {
    type: 'choice',
    env: 'EXTPROC_PARKING',
    choices: ['on', 'off'],
    default: 'off',
    section: 'resume',
    help: 'Also retry RESOURCE_EXHAUSTED (no free workers) and FAILED_PRECONDITION, within --park-budget-ms.',
  },
  'park-budget-ms': {
    type: 'number',
    env: 'EXTPROC_PARK_BUDGET_MS',
    default: 5000,
    min: 1,
    section: 'resume',
    help: 'With parking on, the resume budget is the smaller of this and --resume-budget-ms.',
  },
  'parked-max': {
    type: 'number',
    env: 'EXTPROC_PARKED_MAX',
    default: DEFAULT_PARKED_MAX,
    min: 1,
    section: 'resume',
    help: 'Most requests waiting on a retrying resume at once (parked); more are answered 503 "router at capacity" at once. Requests for running actors never take a slot.',
  },
  'egress-timeout-ms': {
    type: 'number',
    env: 'EXTPROC_EGRESS_TIMEOUT_MS',
    default: 2000,
    min: 1,
    max: 600_000,
    section: 'egress',
    key: 'timeoutMs',
    help: 'How long the control-plane reads of one egress CONNECT (GetActor, then GetActorEgressPolicy) may take together; past it, or past the data plane\'s own budget when shorter, the CONNECT is answered 503 control plane unavailable.',
  },
  'worker-port': {
    type: 'number',
    env: 'EXTPROC_WORKER_PORT',
    envAliases: ['WORKER_PORT'],
    default: 8443,
    min: 1,
    max: 65535,
    section: 'routing',
    help: 'Port of the worker tunnel, published in the original_dst metadata (local).',
  },
  'actor-suffix': {
    type: 'string',
    env: 'EXTPROC_ACTOR_SUFFIX',
    envAliases: ['ACTOR_SUFFIX'],
    default: DEFAULT_ACTOR_SUFFIX,
    section: 'routing',
    help: 'DNS suffix under which hosts name actors (<name>.<atespace>.<suffix>).',
  },
  'tls-credential-bundle': {
    type: 'string',
    env: 'EXTPROC_TLS_CREDENTIAL_BUNDLE',
    section: 'grpc',
    default: '',
    help: 'PEM file with extproc\'s certificate (its SPIFFE URI) and private key for the ext_proc listener: mTLS, TLS 1.3, ALPN h2 (empty: plaintext, with a warning at start-up).',
  },
  'tls-client-ca': {
    type: 'string',
    env: 'EXTPROC_TLS_CLIENT_CA',
    section: 'grpc',
    default: '',
    help: 'PEM file with the CA certificates that sign the data plane\'s (the proxy\'s) client certificate (required with --tls-credential-bundle).',
  },
  'tls-client-spiffe-id': {
    type: 'string',
    env: 'EXTPROC_TLS_CLIENT_SPIFFE_ID',
    section: 'grpc',
    default: devIdentities().proxy,
    help: 'The data plane is accepted when one of its certificate\'s URI SANs is this SPIFFE ID, or starts with it when it ends in "/".',
  },
  'tls-watch-ms': {
    type: 'number',
    env: 'EXTPROC_TLS_WATCH_MS',
    section: 'grpc',
    default: DEFAULT_WATCH_INTERVAL_MS,
    min: 10,
    help: 'How often the listener\'s two files are checked for changes; new connections use new credentials, open ones keep theirs.',
  },
  'cert-expiry-warning-hours': certExpiryWarningFlag('EXTPROC_CERT_EXPIRY_WARNING_HOURS', 'extproc loads', 'admin'),
} as const satisfies FlagSpecs;

export const EXTPROC_FLAG_SET = defineFlagSet({
  command: 'extproc',
  summary:
    'The Envoy ext_proc v3 server (envoy.service.ext_proc.v3.ExternalProcessor/Process): resolves the actor named by the ' +
    'request authority through ateapi.Control/ResumeActor and publishes the worker address as dynamic metadata.',
  sections: {
    grpc: 'The ext_proc gRPC server the data plane (actor-edge proxy or Envoy) streams to, and mTLS on it.',
    admin: 'The admin HTTP API, and certificate expiry warnings.',
    controlPlane: 'The control plane extproc calls ResumeActor on, and mTLS to it.',
    resume: 'How a resume is retried, and parking while the platform has no capacity.',
    routing: 'How a host names an actor, and the worker port published.',
    egress: 'Egress CONNECTs (request headers whose xds.listener_direction attribute is OUTBOUND): the actor named by the source.certificate attribute, checked with GetActor and its egress policy.',
  },
  flags: EXTPROC_FLAGS,
  variables: { ...LOG_LEVEL_VARIABLE, ...OTEL_VARIABLES },
});

export interface ExtprocConfig {
  readonly listen: HostPort;
  readonly admin: HostPort;
  readonly adminToken: string | undefined;
  /** `host:port` of the control plane. */
  readonly apiserver: string;
  readonly workerPort: number;
  readonly actorSuffix: string;
  readonly resumeBudgetMs: number;
  /** The control-plane reads of one egress CONNECT, together, at most. */
  readonly egressTimeoutMs: number;
  /** 0: no idle timeout. */
  readonly streamIdleTimeoutMs: number;
  /** `--parking on`: its budget; undefined: off. */
  readonly parking: { readonly budgetMs: number } | undefined;
  /** `--parked-max`: callers of retrying resumes at once, at most. */
  readonly parkedMax: number;
  /** TLS to the control plane; undefined: plaintext. */
  readonly apiserverTls: ClientTlsFiles | undefined;
  /** mTLS on the ext_proc listener; undefined: plaintext. */
  readonly listenTls: MtlsServerSettings | undefined;
  readonly certExpiryWarningHours: number;
  /** `/ready`'s gRPC health check of the control plane. */
  readonly healthCheck: { readonly intervalMs: number; readonly timeoutMs: number };
  /** OpenTelemetry tracing (`lib/tracing/config.ts`). */
  readonly tracing: TracingConfig;
}

function listenTls(values: FlagValues<typeof EXTPROC_FLAGS>): MtlsServerSettings | undefined {
  const credentialBundle = values['tls-credential-bundle'];
  const clientCa = values['tls-client-ca'];
  if (credentialBundle === '' && clientCa === '') return undefined;
  if (credentialBundle === '' || clientCa === '') throw new UsageError('--tls-credential-bundle and --tls-client-ca go together');
  let clientIdentity;
  try {
    clientIdentity = parseSpiffeMatch(values['tls-client-spiffe-id']);
  } catch (err) {
    throw new UsageError(`--tls-client-spiffe-id: ${(err as Error).message}`);
  }
  return Object.freeze({ credentialBundle, clientCa, clientIdentity, watchIntervalMs: values['tls-watch-ms'] });
}

function apiserverTls(values: FlagValues<typeof EXTPROC_FLAGS>, host: string): ClientTlsFiles | undefined {
  const caFile = values['apiserver-ca'];
  const credentialBundle = values['apiserver-credential-bundle'];
  if (caFile === '' && credentialBundle === '') {
    if (values['apiserver-server-name'] !== '') throw new UsageError('--apiserver-server-name needs --apiserver-ca and --apiserver-credential-bundle');
    return undefined;
  }
  if (caFile === '' || credentialBundle === '') throw new UsageError('--apiserver-ca and --apiserver-credential-bundle go together');
  const serverName = values['apiserver-server-name'] || host;
  if (net.isIP(serverName)) throw new UsageError(`--apiserver-server-name: the control plane is checked by name; "${serverName}" is an IP address`);
  return Object.freeze({ caFile, credentialBundle, serverName });
}

/** `tracing`: read from the environment by `readExtprocConfig` (off by default). */
export function buildConfig(values: FlagValues<typeof EXTPROC_FLAGS>, tracing: TracingConfig = TRACING_OFF): ExtprocConfig {
  const apiserver = parseHostPort(values.apiserver, '--apiserver');
  return Object.freeze({
    listen: parseHostPort(values.listen, '--listen'),
    admin: parseHostPort(values.admin, '--admin'),
    adminToken: values['admin-token'],
    apiserver: formatHostPort(apiserver.host, apiserver.port),
    workerPort: values['worker-port'],
    actorSuffix: normaliseSuffix(values['actor-suffix']),
    resumeBudgetMs: values['resume-budget-ms'],
    egressTimeoutMs: values['egress-timeout-ms'],
    streamIdleTimeoutMs: values['stream-idle-timeout-ms'],
    parking: values.parking === 'on' ? Object.freeze({ budgetMs: values['park-budget-ms'] }) : undefined,
    parkedMax: values['parked-max'],
    apiserverTls: apiserverTls(values, apiserver.host),
    listenTls: listenTls(values),
    certExpiryWarningHours: values['cert-expiry-warning-hours'],
    healthCheck: Object.freeze({ intervalMs: values['health-check-interval-ms'], timeoutMs: values['health-check-timeout-ms'] }),
    tracing,
  });
}

/** Reads argv over the environment over the `--config` file over the defaults (tracing from `OTEL_*`). */
export function readExtprocConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, opts: ReadOptions = {}): ComponentConfigRead<ExtprocConfig> {
  return readComponentConfig(EXTPROC_FLAG_SET, (values) => buildConfig(values, readTracingConfig(env, EXTPROC_SERVICE_NAME)), argv, env, opts);
}

/** `readExtprocConfig` for a caller that never passes `--help` (a test): the frozen config. */
export function extprocConfigOf(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ExtprocConfig {
  const read = readExtprocConfig(argv, env);
  if (read.kind !== 'config') throw new UsageError('--help is not a configuration');
  return read.config;
}
