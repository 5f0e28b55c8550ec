/**
 * The proxy's flags and its frozen configuration: the only place in the proxy that reads the environment.
 * Flag names and environment variables are a contract shared with compose, `npm start` and the benchmark.
 */
import { defineFlagSet, LOG_LEVEL_VARIABLE, UsageError, type FlagSpecs, type FlagValues } from '../lib/flags.js';
import { parseHostPort } from '../lib/address.js';
import { DEFAULT_ACTOR_SUFFIX, normaliseSuffix } from '../lib/actor-ref.js';
import { INTERNAL_HEADERS } from '../lib/wire-contract.js';
import { buildChainSettings, FILTER_FLAGS, RERUN_FLAGS, type ChainSettings } from './chain/config.js';
import { EXT_PROC_FLAGS } from './stages/ext-proc/settings.js';
import { filterSpec, type FilterSpec } from './chain/load-filters.js';
import { ACTOR_CACHE_FLAGS, buildCacheConfig, type CacheConfig } from './stages/actor-cache/config.js';
import { buildEgressCacheConfig, EGRESS_CACHE_FLAGS, type EgressCacheConfig } from './egress/egress-cache-config.js';
import { buildExtProcStageConfig, EXT_PROC_ADDRESS_FLAGS, EXT_PROC_LIMIT_FLAGS, EXT_PROC_TLS_FLAGS, type ExtProcStageConfig } from './stages/ext-proc/config.js';
import { BENCHMARK_RESOLVER_FLAGS, type ResolverConfig } from './stages/apiserver/config.js';
import { ADMIN_FLAGS, buildAdminConfig, buildHealthCheckConfig, HEALTH_CHECK_FLAGS, type AdminConfig, type HealthCheckConfig } from './admin/config.js';
import type { IngressConfig } from './edge/ingress.js';
import type { LifecycleConfig } from './edge/lifecycle.js';
import { buildUpstreamConfig, UPSTREAM_POOL_FLAGS, UPSTREAM_TIMEOUT_FLAGS, UPSTREAM_TLS_FLAGS, type UpstreamConfig } from './upstream/config.js';
import path from 'node:path';
import { configFlag } from '../lib/config-file.js';
import { readComponentConfig, type BuildContext, type ComponentConfigRead, type ReadOptions } from '../lib/component-config.js';
import { buildTunnelsConfig, buildUpgradeTokens, TUNNEL_FLAGS, type TunnelsConfig } from './tunnels/config.js';
import { isLowerCaseToken } from './http/token.js';
import { buildOpsSettings, CERT_EXPIRY_FLAGS, DRAIN_FLAGS, OPS_FLAGS, type OpsSettings } from './ops/config.js';
import { buildOverloadConfig, OVERLOAD_FLAGS, type OverloadConfig } from './ops/overload/config.js';
import { buildEgressListenerConfig, EGRESS_LISTENER_FLAGS, type EgressListenerConfig } from './egress/config.js';
import { buildListenersConfig, CONNECT_LISTENER_FLAGS, LISTENER_FLAGS, type ListenersConfig, type TlsListenConfig } from './edge/listeners-config.js';

import { OTEL_VARIABLES, readTracingConfig, TRACING_OFF, type TracingConfig } from '../lib/tracing/config.js';

export const PROXY_FLAGS = {
  config: {
    ...configFlag('PROXY_CONFIG', 'proxy'),
    help: 'A config file (.yaml, .yml or .json) with these settings in sections and the filter list (schema/proxy.schema.json); flags and environment variables override it.',
  },
  ...LISTENER_FLAGS,
  'misdirected-421': {
    type: 'choice',
    env: 'PROXY_MISDIRECTED_421',
    section: 'ingress',
    choices: ['on', 'off'],
    default: 'off',
    help: 'On the HTTPS listener, answer 421 Misdirected Request to a request whose authority is not the TLS SNI its connection was opened with (for load balancers that hash connections by SNI; the client retries on a connection of its own).',
  },
  'h2-max-concurrent-streams': {
    type: 'number',
    env: 'PROXY_H2_MAX_CONCURRENT_STREAMS',
    section: 'ingress',
    default: 100,
    min: 1,
    max: 10000,
    help: 'Streams one HTTP/2 client connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); a client that opens more loses its connection (GOAWAY).',
  },
  ...ADMIN_FLAGS,
  ...EXT_PROC_ADDRESS_FLAGS,
  ...HEALTH_CHECK_FLAGS,
  ...ACTOR_CACHE_FLAGS,
  // The egress verdict cache (proxy/egress/verdict-cache.ts): its three flags, together.
  ...EGRESS_CACHE_FLAGS,
  ...RERUN_FLAGS,
  ...EXT_PROC_LIMIT_FLAGS,
  'max-replay-body-bytes': {
    type: 'number',
    env: 'PROXY_MAX_REPLAY_BODY_BYTES',
    section: 'chain',
    default: 1048576,
    help: 'Request bodies up to this size are retained so a re-run can replay them; larger bodies stream through and cannot be replayed.',
  },
  ...OVERLOAD_FLAGS,
  ...FILTER_FLAGS,
  ...OPS_FLAGS,
  ...UPSTREAM_TIMEOUT_FLAGS,
  ...EXT_PROC_FLAGS,
  ...BENCHMARK_RESOLVER_FLAGS,
  ...DRAIN_FLAGS,
  ...UPSTREAM_POOL_FLAGS,
  'strip-headers': { type: 'list', env: 'PROXY_STRIP_HEADERS', section: 'ingress', help: 'Extra request headers to remove at the ingress (comma-separated in the environment).' },
  'xff-trusted-hops': {
    type: 'number',
    env: 'PROXY_XFF_TRUSTED_HOPS',
    section: 'ingress',
    default: 0,
    min: 0,
    max: 64,
    help: 'Trusted proxies in front of this one (Envoy xff_num_trusted_hops): above 0 a client\'s X-Forwarded-Proto, Forwarded, X-Forwarded-Host and X-Real-IP are forwarded; at 0 they are replaced or removed.',
  },
  'request-id-trusted': {
    type: 'choice',
    env: 'PROXY_REQUEST_ID_TRUSTED',
    section: 'ingress',
    choices: ['auto', 'on', 'off'],
    default: 'auto',
    help: 'Keep a client\'s X-Request-Id (on), or replace it with one of the proxy\'s own (off); auto: keep it only when --xff-trusted-hops is above 0 (the peer is a trusted proxy). Every response carries the request\'s id.',
  },
  'headers-timeout-ms': { type: 'number', env: 'PROXY_HEADERS_TIMEOUT_MS', section: 'ingress', default: 60000, min: 1, help: 'Request headers must arrive within this time (408 otherwise).' },
  'request-timeout-ms': {
    type: 'number',
    env: 'PROXY_REQUEST_TIMEOUT_MS',
    section: 'ingress',
    default: 300000,
    help: 'The whole request (headers and body) must arrive within this time (408 otherwise); 0 disables.',
  },
  'keep-alive-timeout-ms': { type: 'number', env: 'PROXY_KEEP_ALIVE_TIMEOUT_MS', section: 'ingress', default: 5000, min: 1, help: 'Idle time before a client keep-alive connection is closed.' },
  ...TUNNEL_FLAGS,
  ...CONNECT_LISTENER_FLAGS,
  // The egress listener: actors' outbound CONNECTs (proxy/egress/).
  ...EGRESS_LISTENER_FLAGS,
  'actor-suffix': { type: 'string', env: 'PROXY_ACTOR_SUFFIX', envAliases: ['ACTOR_SUFFIX'], section: 'ingress', default: DEFAULT_ACTOR_SUFFIX, help: 'DNS suffix under which hosts name actors.' },
  ...UPSTREAM_TLS_FLAGS,
  ...EXT_PROC_TLS_FLAGS,
  ...CERT_EXPIRY_FLAGS,
} as const satisfies FlagSpecs;

export type ProxyFlags = FlagValues<typeof PROXY_FLAGS>;

/** Request headers a client could use to impersonate the proxy's own routing decisions: always removed at the ingress. */
export { INTERNAL_HEADERS };

/** The largest request head the ingress accepts (431 above); shared with the workers through lib/http-limits.ts. */
export { MAX_HEADER_BYTES } from '../lib/http-limits.js';

export type { ListenersConfig, TlsListenConfig };

/** How the ingress reads and forwards client requests (the protocol engines and the request lifecycle). */
export type IngressSettings = IngressConfig & LifecycleConfig & {
  /** Normalised (no dots at the ends, lower case). */
  readonly actorSuffix: string;
};

/** The chain: user filters, their timeout, and the re-run policy. */

/** The admin listener, the access log and shutdown. */
export type OpsConfig = AdminConfig & OpsSettings;

/**
 * The proxy's configuration as a tree of frozen slices; each component is handed only its own (the stages theirs,
 * the edge its listeners and ingress, the router its upstream, the admin its ops).
 */
export type { ChainSettings };

export interface ProxyConfig {
  /** `--config`: the file the flags were merged over (undefined when none). */
  readonly configFile: string | undefined;
  readonly workers: number;
  /** Normalised (no dots at the ends, lower case). */
  readonly actorSuffix: string;
  readonly listeners: ListenersConfig;
  readonly ingress: IngressSettings;
  readonly chain: ChainSettings;
  readonly cache: CacheConfig;
  /** The egress verdict cache. */
  readonly egressCache: EgressCacheConfig;
  readonly extProc: ExtProcStageConfig;
  readonly resolver: ResolverConfig;
  /** `/ready`'s gRPC health check of the resolver. */
  readonly healthCheck: HealthCheckConfig;
  readonly upstream: UpstreamConfig;
  readonly tunnels: TunnelsConfig;
  /** The egress listener (`--egress-listen` and its flags); undefined when off. */
  readonly egressListener: EgressListenerConfig | undefined;
  /** The replay budget, the connection limit and the overload manager's thresholds. */
  readonly overload: OverloadConfig;
  readonly ops: OpsConfig;
  /** OpenTelemetry tracing, from the standard `OTEL_*` environment variables (`lib/tracing/config.ts`). */
  readonly tracing: TracingConfig;
}

/** The service name the proxy's spans carry unless `OTEL_SERVICE_NAME` says otherwise. */
export const PROXY_SERVICE_NAME = 'actor-edge-proxy';

/**
 * The config file the flags were read over: its path, and its `chain.filters` (used when no `--filter` was given).
 */
export interface ProxyConfigFile {
  readonly path: string;
  readonly filters: readonly FilterSpec[] | undefined;
}

/** `file`: the config file read for these flags; `tracing`: read from the environment by `readProxyConfig` (off by default). */
export function buildConfig(flags: ProxyFlags, file?: ProxyConfigFile, tracing: TracingConfig = TRACING_OFF): ProxyConfig {
  const extra = flags['strip-headers'].map((h) => h.toLowerCase());
  for (const h of extra) if (!isLowerCaseToken(h)) throw new UsageError(`--strip-headers: "${h}" is not a header name`);
  const requestTimeoutMs = flags['request-timeout-ms'];
  if (requestTimeoutMs !== 0 && requestTimeoutMs < flags['headers-timeout-ms']) {
    throw new UsageError('--request-timeout-ms must be 0 or at least --headers-timeout-ms');
  }
  if (flags['misdirected-421'] === 'on' && flags['tls-listen'] === undefined) {
    throw new UsageError('--misdirected-421 needs --tls-listen (it compares a request with the TLS SNI of its connection)');
  }
  if (flags['connect-timeout-ms'] >= flags['rerun-budget-ms']) {
    // A connect that times out re-runs: it must time out while a re-run can still start.
    throw new UsageError('--connect-timeout-ms must be below --rerun-budget-ms (a connect timeout re-runs the request within the budget)');
  }
  const actorSuffix = normaliseSuffix(flags['actor-suffix']);
  const freeze = Object.freeze;
  return freeze({
    configFile: file?.path,
    workers: flags.workers,
    actorSuffix,
    listeners: buildListenersConfig(flags),
    ingress: freeze({
      h2MaxConcurrentStreams: flags['h2-max-concurrent-streams'],
      headersTimeoutMs: flags['headers-timeout-ms'],
      requestTimeoutMs,
      keepAliveTimeoutMs: flags['keep-alive-timeout-ms'],
      drainIdleGraceMs: flags['drain-idle-grace-ms'],
      stripHeaders: freeze([...new Set([...INTERNAL_HEADERS, ...extra])]),
      xffTrustedHops: flags['xff-trusted-hops'],
      maxReplayBodyBytes: flags['max-replay-body-bytes'],
      upgradeTokens: buildUpgradeTokens(flags),
      misdirected421: flags['misdirected-421'] === 'on',
      requestIdTrusted: flags['request-id-trusted'] === 'auto' ? flags['xff-trusted-hops'] > 0 : flags['request-id-trusted'] === 'on',
      actorSuffix,
    }),
    chain: buildChainSettings(flags, file?.filters),
    cache: buildCacheConfig(flags),
    egressCache: buildEgressCacheConfig(flags),
    extProc: buildExtProcStageConfig(flags),
    resolver: freeze({ kind: flags.resolver, apiserver: parseHostPort(flags.apiserver, '--apiserver'), workerPort: flags['worker-port'] }),
    healthCheck: buildHealthCheckConfig(flags),
    upstream: buildUpstreamConfig(flags),
    tunnels: buildTunnelsConfig(flags),
    egressListener: buildEgressListenerConfig(flags),
    overload: buildOverloadConfig(flags),
    ops: freeze({ ...buildAdminConfig(flags), ...buildOpsSettings(flags) }),
    tracing,
  });
}

const SUMMARY =
  'The ingress proxy: user filters, then actor-cache (cache-first actor bindings), then ext_proc (one stream per miss), then the router.';

/** One entry of `chain.filters`: a module path, or `{ module, options }` (paths relative to the config file). */
const FILTER_ITEM = {
  type: ['string', 'object'],
  minLength: 1,
  properties: { module: { type: 'string', minLength: 1 }, options: { type: 'object' } },
  required: ['module'],
  additionalProperties: false,
};

/** The proxy's flags with the config file's sections (each slice of ProxyConfig is built from one section). */
export const PROXY_FLAG_SET = defineFlagSet({
  command: 'proxy',
  summary: SUMMARY,
  sections: {
    listeners: 'What the proxy listens on for clients (the admin API is under admin).',
    ingress: 'What a client request must look like, and what the ingress does to it.',
    chain: 'User filters, and re-running the chain after a stale answer, connect failure or reset.',
    cache: 'The actor-binding cache in front of ext_proc.',
    egressCache: 'The egress verdict cache in front of ext_proc: actor certificate and destination to the verdict.',
    extProc: 'The ext_proc server and the ext-proc stage, with the field names of Envoy\'s ExternalProcessor.',
    upstream: 'Connections to the workers: timeouts, pools and mTLS.',
    tunnels: 'WebSocket upgrades and CONNECT tunnels.',
    egress: 'The egress listener: actors\' outbound CONNECTs, authorized through ext_proc, and their tunnels.',
    overload: 'Budgets and overload: the retained request bodies and the client connections, bounded over the whole process, and shedding load when the event loop or the heap is saturated.',
    admin: 'The admin API (/live, /ready, /stats, /metrics, reloads) and /ready\'s health check of the resolver.',
    ops: 'Processes, logs and draining.',
    benchmark: 'Not for production: the benchmark\'s comparison arm, in which the proxy calls ResumeActor itself instead of ext_proc (proxy/stages/apiserver/).',
  },
  flags: PROXY_FLAGS,
  fileFields: {
    'chain.filters': {
      help: 'User filters in chain order: a module path or { module, options } (relative to the config file); --filter replaces the list.',
      schema: { type: 'array', items: FILTER_ITEM },
      flag: 'filter',
      flat: 'filters',
    },
  },
  variables: { ...LOG_LEVEL_VARIABLE, ...OTEL_VARIABLES },
});

function filtersOf(context: BuildContext): readonly FilterSpec[] | undefined {
  const list = context.fields['chain.filters'] as readonly (string | { module: string; options?: Record<string, unknown> })[] | undefined;
  if (list === undefined || context.file === undefined) return undefined;
  const dir = path.dirname(path.resolve(context.file));
  const resolve = (module: string): string => (module.startsWith('file:') ? module : path.resolve(dir, module));
  return Object.freeze(list.map((item) => (typeof item === 'string' ? filterSpec(resolve(item)) : filterSpec(resolve(item.module), item.options ?? {}))));
}

/**
 * Reads the proxy's flags (argv over the environment over the `--config` file, nested or flat, over the defaults)
 * into a frozen ProxyConfig, with the deprecated names used. Called again on a reload, with the same argv and
 * environment.
 */
export function readProxyConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, opts: ReadOptions = {}): ComponentConfigRead<ProxyConfig> {
  const tracing = readTracingConfig(env, PROXY_SERVICE_NAME);
  return readComponentConfig(PROXY_FLAG_SET, (values, context) => buildConfig(values, context.file === undefined ? undefined : { path: context.file, filters: filtersOf(context) }, tracing), argv, env, opts);
}

/** `readProxyConfig` for a caller that never passes `--help` (a reload, a test): the frozen config. */
export function proxyConfigOf(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ProxyConfig {
  const read = readProxyConfig(argv, env);
  if (read.kind !== 'config') throw new UsageError('--help is not a configuration');
  return read.config;
}
