/** `actor-edge worker` flags and its frozen config: the only place the worker process reads the environment and its config file. */
import net from 'node:net';
import { defineFlagSet, LOG_LEVEL_VARIABLE, flagSetHelp, UsageError, type FlagSpecs, type FlagValues } from '../../lib/flags.js';
import { configFlag } from '../../lib/config-file.js';
import { readComponentConfig, type ComponentConfigRead, type ReadOptions } from '../../lib/component-config.js';
import { parseHostPort, formatHostPort } from '../../lib/address.js';
import { DEFAULT_ACTOR_SUFFIX, normaliseSuffix } from '../../lib/actor-ref.js';
import { certExpiryWarningFlag } from '../../lib/tls/expiry.js';
import { workerTlsSettings, type WorkerTlsSettings } from './tls.js';

/** The worker tunnel's mTLS flags (apiserver-stub takes the same ones for its in-process workers). */
export const WORKER_TLS_FLAGS = {
  'tls-credential-bundle': {
    type: 'string',
    env: 'WORKER_TLS_CREDENTIAL_BUNDLE',
    default: '',
    section: 'tls',
    key: 'credentialBundle',
    help: 'PEM file with the worker\'s certificate (its only SAN: its SPIFFE URI) and private key; empty: plain HTTP',
  },
  'tls-client-ca': {
    type: 'string',
    env: 'WORKER_TLS_CLIENT_CA',
    default: '',
    section: 'tls',
    key: 'clientCa',
    help: 'PEM file with the CA certificates that sign the client (proxy) certificate',
  },
  'tls-client-identity': {
    type: 'string',
    env: 'WORKER_TLS_CLIENT_IDENTITY',
    default: '',
    section: 'tls',
    key: 'clientIdentity',
    help: 'the one client SPIFFE URI accepted; any other is refused',
  },
} as const satisfies FlagSpecs;

/** The worker TLS settings from flag values named as in WORKER_TLS_FLAGS. */
export function readWorkerTls(v: { readonly 'tls-credential-bundle': string; readonly 'tls-client-ca': string; readonly 'tls-client-identity': string }): WorkerTlsSettings | undefined {
  return workerTlsSettings(
    { credentialBundle: v['tls-credential-bundle'], clientCa: v['tls-client-ca'], clientIdentity: v['tls-client-identity'] },
    { credentialBundle: '--tls-credential-bundle', clientCa: '--tls-client-ca', clientIdentity: '--tls-client-identity' },
  );
}

export const WORKER_FLAGS = {
  config: configFlag('WORKER_CONFIG', 'worker'),
  apiserver: { type: 'string', env: 'WORKER_APISERVER', default: '127.0.0.1:50052', section: 'worker', help: 'apiserver-stub gRPC address to attach to' },
  'advertise-ip': {
    type: 'string?',
    env: 'WORKER_ADVERTISE_IP',
    section: 'worker',
    help: 'the IP the control plane hands out for this worker (required; the container image\'s entry point also takes "auto": the container\'s own address)',
  },
  'listen-ip': { type: 'string?', env: 'WORKER_LISTEN_IP', section: 'worker', help: 'the IP the HTTP listener binds (default: the advertise IP; 0.0.0.0 in containers)' },
  'worker-port': { type: 'number', env: 'WORKER_PORT', default: 8443, max: 65535, section: 'worker', key: 'port', help: 'HTTP port (0: the OS chooses and the bound port is registered)' },
  capacity: { type: 'number', env: 'WORKER_CAPACITY', default: 1, min: 1, max: 1024, section: 'worker', help: 'actors this worker can host' },
  'actor-suffix': { type: 'string', env: 'ACTOR_SUFFIX', default: DEFAULT_ACTOR_SUFFIX, section: 'worker', help: 'DNS suffix of actor hosts' },
  ...WORKER_TLS_FLAGS,
  'cert-expiry-warning-hours': certExpiryWarningFlag('WORKER_CERT_EXPIRY_WARNING_HOURS', 'the worker loads'),
} as const satisfies FlagSpecs;

export const WORKER_FLAG_SET = defineFlagSet({
  command: 'worker',
  summary:
    'One simulated worker (the worker tunnel) as its own process: attaches to apiserver-stub over atestub.Workers/Attach, ' +
    'serves the actors the control plane activates on it, and answers 421 + X-Ate-Assignment-Stale: true for any other.',
  sections: {
    worker: 'The control plane to attach to, the worker\'s address and its capacity.',
    tls: 'mTLS on the worker\'s listener (the worker tunnel\'s: exactly one client identity).',
  },
  flags: WORKER_FLAGS,
  variables: LOG_LEVEL_VARIABLE,
});

export interface WorkerConfig {
  readonly apiserver: string;
  readonly advertiseIp: string;
  readonly listenIp: string;
  readonly port: number;
  readonly capacity: number;
  readonly actorSuffix: string;
  /** mTLS on the HTTP listener; undefined: plain HTTP. */
  readonly tls: WorkerTlsSettings | undefined;
  readonly certExpiryWarningHours: number;
}

export function workerHelp(): string {
  return flagSetHelp(WORKER_FLAG_SET);
}

/** Parses argv over env over the `--config` file into a frozen WorkerConfig. Throws UsageError on bad input. */
export function readWorkerConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, opts: ReadOptions = {}): ComponentConfigRead<WorkerConfig> {
  return readComponentConfig(WORKER_FLAG_SET, buildWorkerConfig, argv, env, opts);
}

function buildWorkerConfig(v: FlagValues<typeof WORKER_FLAGS>): WorkerConfig {
  const advertiseIp = v['advertise-ip'];
  if (advertiseIp === undefined) throw new UsageError('--advertise-ip (WORKER_ADVERTISE_IP) is required');
  if (!net.isIP(advertiseIp)) throw new UsageError(`--advertise-ip: expected an IP address, got "${advertiseIp}"`);
  const listenIp = v['listen-ip'] ?? advertiseIp;
  if (!net.isIP(listenIp)) throw new UsageError(`--listen-ip: expected an IP address, got "${listenIp}"`);
  const apiserver = parseHostPort(v.apiserver, '--apiserver');
  const suffix = normaliseSuffix(v['actor-suffix']);
  if (suffix.length === 0) throw new UsageError('--actor-suffix: must not be empty');
  return Object.freeze({
    apiserver: formatHostPort(apiserver.host, apiserver.port),
    advertiseIp,
    listenIp,
    port: v['worker-port'],
    capacity: v.capacity,
    actorSuffix: suffix,
    tls: readWorkerTls(v),
    certExpiryWarningHours: v['cert-expiry-warning-hours'],
  });
}
