/**
 * apiserver-stub flags and the frozen Config built from them: the only place this component reads the environment
 * and its config file.
 */
import net from 'node:net';
import { defineFlagSet, LOG_LEVEL_VARIABLE, flagSetHelp, UsageError, type FlagSpecs, type FlagValues } from '../lib/flags.js';
import { configFlag } from '../lib/config-file.js';
import { readComponentConfig, type ComponentConfigRead, type ReadOptions } from '../lib/component-config.js';
import { parseHostPort, type HostPort } from '../lib/address.js';
import { DEFAULT_ACTOR_SUFFIX, isResourceName, normaliseSuffix } from '../lib/actor-ref.js';
import { ipv4Add } from './ip.js';
import { parseEgressSeed, type EgressSeed } from './egress-seed.js';
import { seedActorNames } from './seed.js';
import { WORKER_TLS_FLAGS } from './worker/config.js';
import { certExpiryWarningFlag } from '../lib/tls/expiry.js';
import { workerTlsSettings, type WorkerTlsSettings } from './worker/tls.js';

/** The in-process workers take the worker's TLS flags, under their own names. */
function inProcess<S extends (typeof WORKER_TLS_FLAGS)[keyof typeof WORKER_TLS_FLAGS]>(spec: S, key: string) {
  return { ...spec, section: 'workers', key, help: `in-process workers: ${spec.help}` } as const;
}

export const STUB_FLAGS = {
  config: configFlag('APISERVER_CONFIG', 'apiserver-stub'),
  listen: {
    type: 'string',
    env: 'APISERVER_LISTEN',
    default: '127.0.0.1:50052',
    section: 'controlPlane',
    help: 'gRPC listen address (ateapi.Control, and atestub.Workers unless --attach-listen is given)',
  },
  'attach-listen': {
    type: 'string?',
    env: 'APISERVER_ATTACH_LISTEN',
    section: 'controlPlane',
    help: 'a separate gRPC listen address for atestub.Workers/Attach only (workers reach this one; --listen then serves only ateapi.Control)',
  },
  'tls-credential-bundle': {
    type: 'string',
    env: 'APISERVER_TLS_CREDENTIAL_BUNDLE',
    default: '',
    section: 'controlPlane',
    help: 'PEM file with the control plane\'s server certificate and key: ateapi.Control is then served over TLS and requires a client certificate (empty: plaintext)',
  },
  'tls-client-ca': {
    type: 'string',
    env: 'APISERVER_TLS_CLIENT_CA',
    default: '',
    section: 'controlPlane',
    help: 'PEM file with the CA certificates that sign the clients\' certificates (required with --tls-credential-bundle)',
  },
  admin: { type: 'string', env: 'APISERVER_ADMIN', default: '127.0.0.1:9903', section: 'admin', key: 'listen', help: 'admin HTTP listen address' },
  'admin-token': {
    type: 'string?',
    env: 'APISERVER_ADMIN_TOKEN',
    section: 'admin',
    key: 'token',
    secret: true,
    help: 'when set, every admin call but /ready and /live needs "Authorization: Bearer <token>" (a browser: Basic, the token as the password)',
  },
  workers: { type: 'number', env: 'APISERVER_WORKERS', default: 64, max: 4096, section: 'workers', key: 'count', help: 'in-process workers to run (0 = none; workers then attach as separate processes)' },
  'worker-ip-base': { type: 'string', env: 'WORKER_IP_BASE', default: '127.0.1.1', section: 'workers', key: 'ipBase', help: 'IPv4 address of the first in-process worker; the Nth is base+N-1' },
  'worker-port': { type: 'number', env: 'WORKER_PORT', default: 8443, max: 65535, section: 'workers', key: 'port', help: 'HTTP port every in-process worker listens on' },
  'worker-capacity': { type: 'number', env: 'WORKER_CAPACITY', default: 1, min: 1, max: 1024, section: 'workers', key: 'capacity', help: 'actors each in-process worker can host' },
  'worker-tls-credential-bundle': inProcess(WORKER_TLS_FLAGS['tls-credential-bundle'], 'tlsCredentialBundle'),
  'worker-tls-client-ca': inProcess(WORKER_TLS_FLAGS['tls-client-ca'], 'tlsClientCa'),
  'worker-tls-client-identity': inProcess(WORKER_TLS_FLAGS['tls-client-identity'], 'tlsClientIdentity'),
  actors: { type: 'number', env: 'APISERVER_ACTORS', default: 100, max: 1_000_000, section: 'actors', key: 'count', help: 'actors created SUSPENDED at start (actor-000, actor-001, ...)' },
  atespace: { type: 'string', env: 'APISERVER_ATESPACE', default: 'demo', section: 'actors', help: 'atespace of the seeded actors' },
  'seed-egress-policies': {
    type: 'string',
    env: 'APISERVER_SEED_EGRESS_POLICIES',
    default: '',
    section: 'actors',
    key: 'egressPolicies',
    help: 'egress policies of the seeded actors: a JSON object of actor name (or "*" for every other seeded actor) → policy, e.g. {"actor-000":{"rules":[{"kind":"cidrs","cidrs":["127.0.0.1/32"],"ports":[9000]}]}}; an actor without one reaches nothing',
  },
  'actor-ca-dir': {
    type: 'string',
    env: 'APISERVER_ACTOR_CA_DIR',
    default: '',
    section: 'actors',
    key: 'caDir',
    help: 'directory of the actor identity CA (actor-ca.pem, actor-ca.key; `actor-edge certs` writes one): POST /actors/:atespace/:name/certificate then mints a certificate for a running actor (empty: it answers 501)',
  },
  destinations: {
    type: 'list',
    env: 'APISERVER_DESTINATIONS',
    section: 'actors',
    help: 'simulated destinations outside the platform for actors\' egress, IPv4:PORT each, on addresses of this host (loopback, or an interface\'s address; comma-separated in the environment; port 0 picks one): each answers every HTTP/1.1 request with 200 and its name; the ready line lists them as destination-1, destination-2, …',
  },
  'resolve-latency-ms': { type: 'number', env: 'APISERVER_RESOLVE_LATENCY_MS', default: 1, max: 60_000, section: 'actors', help: 'delay before ResumeActor answers for a RUNNING actor' },
  'read-latency-ms': { type: 'number', env: 'APISERVER_READ_LATENCY_MS', default: 0, max: 60_000, section: 'actors', help: 'delay before GetActor and GetActorEgressPolicy answer' },
  'cold-resume-ms': { type: 'number', env: 'APISERVER_COLD_RESUME_MS', default: 50, max: 600_000, section: 'actors', help: 'restore time of a cold resume (SUSPENDED → RUNNING) or a move' },
  'auto-create': { type: 'boolean', env: 'APISERVER_AUTO_CREATE', default: false, section: 'actors', help: 'ResumeActor creates unknown (validly named) actors instead of answering NOT_FOUND' },
  'actor-suffix': { type: 'string', env: 'ACTOR_SUFFIX', default: DEFAULT_ACTOR_SUFFIX, section: 'actors', key: 'suffix', help: 'DNS suffix of actor hosts' },
  'cert-expiry-warning-hours': certExpiryWarningFlag('APISERVER_CERT_EXPIRY_WARNING_HOURS', 'the stub loads (control plane, in-process workers)', 'admin'),
} as const satisfies FlagSpecs;

export const STUB_FLAG_SET = defineFlagSet({
  command: 'apiserver-stub',
  summary:
    'A simulated ateapi control plane (gRPC ateapi.Control) with simulated workers that behave like the worker tunnel: ' +
    'each serves only the actors placed on it and answers 421 + X-Ate-Assignment-Stale: true otherwise.',
  sections: {
    controlPlane: 'The ateapi.Control gRPC server, the workers\' attach listener and TLS on the control API.',
    admin: 'The admin HTTP API (actors, workers, churn, outages).',
    workers: 'The in-process workers.',
    actors: 'The seeded actors and how the control plane answers for them.',
  },
  flags: STUB_FLAGS,
  variables: LOG_LEVEL_VARIABLE,
});

export interface StubConfig {
  readonly listen: HostPort;
  /** Undefined: workers attach on `listen`. */
  readonly attachListen: HostPort | undefined;
  readonly admin: HostPort;
  readonly adminToken: string | undefined;
  readonly workers: number;
  readonly workerIpBase: string;
  readonly workerPort: number;
  readonly workerCapacity: number;
  readonly actors: number;
  readonly atespace: string;
  /** The seeded actors' egress policies. */
  readonly egressSeed: EgressSeed;
  /** The actor identity CA's directory; undefined: the stub mints no actor certificates. */
  readonly actorCaDir: string | undefined;
  /** Simulated destinations outside the platform (`destinations.ts`), on addresses of this host. */
  readonly destinations: readonly HostPort[];
  readonly resolveLatencyMs: number;
  readonly readLatencyMs: number;
  readonly coldResumeMs: number;
  readonly autoCreate: boolean;
  readonly actorSuffix: string;
  /** TLS on the ateapi.Control listener; undefined: plaintext. */
  readonly tls: { readonly credentialBundle: string; readonly clientCa: string } | undefined;
  /** mTLS on the in-process workers' listeners; undefined: plain HTTP. */
  readonly workerTls: WorkerTlsSettings | undefined;
  readonly certExpiryWarningHours: number;
}

function controlTls(credentialBundle: string, clientCa: string): StubConfig['tls'] {
  if (credentialBundle === '' && clientCa === '') return undefined;
  if (credentialBundle === '' || clientCa === '') throw new UsageError('--tls-credential-bundle and --tls-client-ca go together');
  return Object.freeze({ credentialBundle, clientCa });
}

export function stubHelp(): string {
  return flagSetHelp(STUB_FLAG_SET);
}

/** Parses argv over env over the `--config` file into a frozen StubConfig. Throws UsageError on bad input. */
export function readStubConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, opts: ReadOptions = {}): ComponentConfigRead<StubConfig> {
  return readComponentConfig(STUB_FLAG_SET, buildStubConfig, argv, env, opts);
}

/**
 * A `--destinations` entry: HOST:PORT with an IPv4 address an actor can dial, one of this host's own (a loopback
 * address, or the address of one of its interfaces: in a container, the container's own). Not 0.0.0.0 (a
 * destination is known, and allowed by policies, by the address it listens on), nor a multicast or broadcast
 * address. Whether the address is this host's is the listen's to find out: an address it does not have fails the
 * stub's start naming the destination.
 */
export function destinationAddress(text: string, where: string): HostPort {
  const at = parseHostPort(text, where);
  if (!net.isIPv4(at.host)) throw new UsageError(`${where}: "${text}" is not an IPv4 address and port`);
  const first = Number(at.host.split('.')[0]);
  if (at.host === '0.0.0.0' || at.host === '255.255.255.255' || (first >= 224 && first <= 239)) {
    throw new UsageError(`${where}: "${text}" is not an address a destination can listen on and an actor dial (one of this host's IPv4 addresses)`);
  }
  return at;
}

function buildStubConfig(v: FlagValues<typeof STUB_FLAGS>): StubConfig {
  if (!net.isIPv4(v['worker-ip-base'])) throw new UsageError(`--worker-ip-base: expected an IPv4 address, got "${v['worker-ip-base']}"`);
  if (v.workers > 0) ipv4Add(v['worker-ip-base'], v.workers - 1); // throws past 255.255.255.255
  if (!isResourceName(v.atespace)) throw new UsageError(`--atespace: "${v.atespace}" is not a DNS-1123 label`);
  const suffix = normaliseSuffix(v['actor-suffix']);
  if (suffix.length === 0) throw new UsageError('--actor-suffix: must not be empty');
  return Object.freeze({
    listen: parseHostPort(v.listen, '--listen'),
    attachListen: v['attach-listen'] === undefined ? undefined : parseHostPort(v['attach-listen'], '--attach-listen'),
    admin: parseHostPort(v.admin, '--admin'),
    adminToken: v['admin-token'],
    workers: v.workers,
    workerIpBase: v['worker-ip-base'],
    workerPort: v['worker-port'],
    workerCapacity: v['worker-capacity'],
    actors: v.actors,
    atespace: v.atespace,
    actorCaDir: v['actor-ca-dir'] === '' ? undefined : v['actor-ca-dir'],
    destinations: Object.freeze(v.destinations.map((d, i) => destinationAddress(d, `--destinations[${i}]`))),
    egressSeed: parseEgressSeed(v['seed-egress-policies'], () => seedActorNames(v.actors)),
    resolveLatencyMs: v['resolve-latency-ms'],
    readLatencyMs: v['read-latency-ms'],
    coldResumeMs: v['cold-resume-ms'],
    autoCreate: v['auto-create'],
    actorSuffix: suffix,
    tls: controlTls(v['tls-credential-bundle'], v['tls-client-ca']),
    certExpiryWarningHours: v['cert-expiry-warning-hours'],
    workerTls: workerTlsSettings(
      { credentialBundle: v['worker-tls-credential-bundle'], clientCa: v['worker-tls-client-ca'], clientIdentity: v['worker-tls-client-identity'] },
      { credentialBundle: '--worker-tls-credential-bundle', clientCa: '--worker-tls-client-ca', clientIdentity: '--worker-tls-client-identity' },
    ),
  });
}
