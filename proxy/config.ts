/**
 * The proxy's flags and its frozen configuration: the only place in the proxy that reads the environment.
 * Flag names and environment variables are a contract shared with compose, `npm start` and the benchmark.
 *
 * Each slice declares its flags and builds its part of the configuration beside its component (`edge/`, `chain/`,
 * `stages/`, `upstream/`, `tunnels/`, `egress/`, `admin/`, `ops/`); this file composes them: the flag set with the
 * config file's sections, and one frozen ProxyConfig.
 */
import { defineFlagSet, LOG_LEVEL_VARIABLE, UsageError, type FlagSpecs, type FlagValues } from '../lib/flags.js';
import { INTERNAL_HEADERS } from '../lib/wire-contract.js';
import { configFlag } from '../lib/config-file.js';
import { readComponentConfig, type ComponentConfigRead, type ReadOptions } from '../lib/component-config.js';
import { OTEL_VARIABLES, readTracingConfig, TRACING_OFF, type TracingConfig } from '../lib/tracing/config.js';
import { buildListenersConfig, CONNECT_LISTENER_FLAGS, LISTENER_FLAGS, type ListenersConfig, type TlsListenConfig } from './edge/listeners-config.js';
import { ACTOR_SUFFIX_FLAGS, buildIngressSettings, CONNECTION_FLAGS, INGRESS_FLAGS, REPLAY_BODY_FLAGS, type IngressSettings } from './edge/config.js';
import { buildChainSettings, CHAIN_FILE_FIELDS, FILTER_FLAGS, filtersInFile, RERUN_FLAGS, type ChainSettings } from './chain/config.js';
import type { FilterSpec } from './chain/load-filters.js';
import { ACTOR_CACHE_FLAGS, buildCacheConfig, type CacheConfig } from './stages/actor-cache/config.js';
import { buildEgressCacheConfig, EGRESS_CACHE_FLAGS, type EgressCacheConfig } from './egress/egress-cache-config.js';
import { EXT_PROC_FLAGS } from './stages/ext-proc/settings.js';
import { buildExtProcStageConfig, EXT_PROC_ADDRESS_FLAGS, EXT_PROC_LIMIT_FLAGS, EXT_PROC_TLS_FLAGS, type ExtProcStageConfig } from './stages/ext-proc/config.js';
import { BENCHMARK_RESOLVER_FLAGS, buildResolverConfig, type ResolverConfig } from './stages/apiserver/config.js';
import { buildUpstreamConfig, UPSTREAM_POOL_FLAGS, UPSTREAM_TIMEOUT_FLAGS, UPSTREAM_TLS_FLAGS, type UpstreamConfig } from './upstream/config.js';
import { buildTunnelsConfig, TUNNEL_FLAGS, type TunnelsConfig } from './tunnels/config.js';
import { buildEgressListenerConfig, EGRESS_LISTENER_FLAGS, type EgressListenerConfig } from './egress/config.js';
import { buildOverloadConfig, OVERLOAD_FLAGS, type OverloadConfig } from './ops/overload/config.js';
import { ADMIN_FLAGS, buildAdminConfig, buildHealthCheckConfig, HEALTH_CHECK_FLAGS, type AdminConfig, type HealthCheckConfig } from './admin/config.js';
import { buildOpsSettings, CERT_EXPIRY_FLAGS, DRAIN_FLAGS, OPS_FLAGS, type OpsSettings } from './ops/config.js';

/**
 * Every flag of the proxy, in an order that is part of the contract: `--help`, the reference and the schema list a
 * section's flags in it, and a run with several problems reports them in it (a slice whose flags are not together
 * here exports them in groups).
 */
export const PROXY_FLAGS = {
  config: {
    ...configFlag('PROXY_CONFIG', 'proxy'),
    help: 'A config file (.yaml, .yml or .json) with these settings in sections and the filter list (schema/proxy.schema.json); flags and environment variables override it.',
  },
  ...LISTENER_FLAGS,
  ...CONNECTION_FLAGS,
  ...ADMIN_FLAGS,
  ...EXT_PROC_ADDRESS_FLAGS,
  ...HEALTH_CHECK_FLAGS,
  ...ACTOR_CACHE_FLAGS,
  // The egress verdict cache (proxy/egress/verdict-cache.ts): its three flags, together.
  ...EGRESS_CACHE_FLAGS,
  ...RERUN_FLAGS,
  ...EXT_PROC_LIMIT_FLAGS,
  ...REPLAY_BODY_FLAGS,
  ...OVERLOAD_FLAGS,
  ...FILTER_FLAGS,
  ...OPS_FLAGS,
  ...UPSTREAM_TIMEOUT_FLAGS,
  ...EXT_PROC_FLAGS,
  ...BENCHMARK_RESOLVER_FLAGS,
  ...DRAIN_FLAGS,
  ...UPSTREAM_POOL_FLAGS,
  ...INGRESS_FLAGS,
  ...TUNNEL_FLAGS,
  ...CONNECT_LISTENER_FLAGS,
  // The egress listener: actors' outbound CONNECTs (proxy/egress/).
  ...EGRESS_LISTENER_FLAGS,
  ...ACTOR_SUFFIX_FLAGS,
  ...UPSTREAM_TLS_FLAGS,
  ...EXT_PROC_TLS_FLAGS,
  ...CERT_EXPIRY_FLAGS,
} as const satisfies FlagSpecs;

export type ProxyFlags = FlagValues<typeof PROXY_FLAGS>;

/** Request headers a client could use to impersonate the proxy's own routing decisions: always removed at the ingress. */
export { INTERNAL_HEADERS };

/** The largest request head the ingress accepts (431 above); shared with the workers through lib/http-limits.ts. */
export { MAX_HEADER_BYTES } from '../lib/http-limits.js';

export type { ChainSettings, IngressSettings, ListenersConfig, TlsListenConfig };

/** The admin listener (`admin/config.ts`), the access log and shutdown (`ops/config.ts`). */
export type OpsConfig = AdminConfig & OpsSettings;

/**
 * The proxy's configuration as a tree of frozen slices; each component is handed only its own (the stages theirs,
 * the edge its listeners and ingress, the router its upstream, the admin its ops).
 */
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
  const ingress = buildIngressSettings(flags);
  if (flags['connect-timeout-ms'] >= flags['rerun-budget-ms']) {
    // Between two slices (the upstream's and the chain's): a connect that times out re-runs, so it must time out
    // while a re-run can still start.
    throw new UsageError('--connect-timeout-ms must be below --rerun-budget-ms (a connect timeout re-runs the request within the budget)');
  }
  const freeze = Object.freeze;
  return freeze({
    configFile: file?.path,
    workers: flags.workers,
    actorSuffix: ingress.actorSuffix,
    listeners: buildListenersConfig(flags),
    ingress,
    chain: buildChainSettings(flags, file?.filters),
    cache: buildCacheConfig(flags),
    egressCache: buildEgressCacheConfig(flags),
    extProc: buildExtProcStageConfig(flags),
    resolver: buildResolverConfig(flags),
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
  fileFields: CHAIN_FILE_FIELDS,
  variables: { ...LOG_LEVEL_VARIABLE, ...OTEL_VARIABLES },
});

/**
 * Reads the proxy's flags (argv over the environment over the `--config` file, nested or flat, over the defaults)
 * into a frozen ProxyConfig, with the deprecated names used. Called again on a reload, with the same argv and
 * environment.
 */
export function readProxyConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, opts: ReadOptions = {}): ComponentConfigRead<ProxyConfig> {
  const tracing = readTracingConfig(env, PROXY_SERVICE_NAME);
  return readComponentConfig(PROXY_FLAG_SET, (values, context) => buildConfig(values, context.file === undefined ? undefined : { path: context.file, filters: filtersInFile(context.fields, context.file) }, tracing), argv, env, opts);
}

/** `readProxyConfig` for a caller that never passes `--help` (a reload, a test): the frozen config. */
export function proxyConfigOf(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ProxyConfig {
  const read = readProxyConfig(argv, env);
  if (read.kind !== 'config') throw new UsageError('--help is not a configuration');
  return read.config;
}
