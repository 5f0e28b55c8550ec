/**
 * The proxy's config file as a tree: where each of the proxy's flags (`config.ts`) sits in a nested config file
 * (`cache: { ttlMs: 2000 }`), the filter list with options (`chain.filters`), and the reader `actor-edge proxy` and
 * `actor-edge validate` use. It reads the nested form and, with a deprecation warning per key, the older flat form
 * (flag names at the top level, `filters` for the list); the frozen ProxyConfig is built by `config.ts`.
 */
import path from 'node:path';
import { defineFlagSet, LOG_LEVEL_VARIABLE, type FlagSpec } from '../lib/flags.js';
import { readComponentConfig, type BuildContext, type ComponentConfigRead } from '../lib/component-config.js';
import { buildConfig, PROXY_FLAGS, type ProxyConfig, type ProxyFlags } from './config.js';
import { filterSpec, type FilterSpec } from './chain/load-filters.js';

interface Place {
  readonly help?: string;
  readonly section?: string;
  readonly key?: string;
  readonly noFile?: true;
  readonly secret?: true;
}

type ProxyFlagName = keyof typeof PROXY_FLAGS;

const extProc = (key: string): Place => ({ section: 'extProc', key });

/** Every proxy flag's place in the file (a new flag without one does not compile). */
const PLACES: Readonly<Record<ProxyFlagName, Place>> = {
  config: {
    noFile: true,
    help: 'A config file (.yaml, .yml or .json) with these settings in sections and the filter list (schema/proxy.schema.json); flags and environment variables override it.',
  },
  listen: { section: 'listeners', key: 'http' },
  'tls-listen': { section: 'listeners', key: 'https' },
  'tls-cert': { section: 'listeners', key: 'tlsCert' },
  'tls-key': { section: 'listeners', key: 'tlsKey' },
  'connect-listen': { section: 'listeners', key: 'connect' },
  'connect-tls-listen': { section: 'listeners', key: 'connectTls' },
  'h2-max-concurrent-streams': {
    section: 'ingress',
    help: 'Streams one HTTP/2 client connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); a client that opens more loses its connection (GOAWAY).',
  },
  'headers-timeout-ms': { section: 'ingress' },
  'request-timeout-ms': { section: 'ingress' },
  'keep-alive-timeout-ms': { section: 'ingress' },
  'strip-headers': { section: 'ingress' },
  'xff-trusted-hops': { section: 'ingress' },
  'actor-suffix': { section: 'ingress' },
  filter: { section: 'chain', noFile: true },
  'filter-timeout-ms': { section: 'chain' },
  'max-reruns': { section: 'chain' },
  'rerun-budget-ms': { section: 'chain' },
  'rerun-backoff-min-ms': { section: 'chain' },
  'rerun-backoff-max-ms': { section: 'chain' },
  'max-replay-body-bytes': { section: 'chain' },
  'actor-cache': { section: 'cache', key: 'enabled' },
  'cache-ttl-ms': { section: 'cache' },
  'cache-max-entries': { section: 'cache' },
  'cache-refresh-ahead': { section: 'cache' },
  extproc: extProc('address'),
  'extproc-message-timeout-ms': extProc('messageTimeoutMs'),
  'extproc-max-message-timeout-ms': extProc('maxMessageTimeoutMs'),
  'extproc-response-headers': extProc('responseHeaders'),
  'extproc-processing-mode': extProc('processingMode'),
  'extproc-allow-mode-override': extProc('allowModeOverride'),
  'failure-mode-allow': extProc('failureModeAllow'),
  'extproc-request-attributes': extProc('requestAttributes'),
  'extproc-forwarding-namespaces': extProc('forwardingNamespaces'),
  'extproc-receiving-namespaces': extProc('receivingNamespaces'),
  'extproc-mutation-rules': extProc('mutationRules'),
  'extproc-mutation-allow-expression': extProc('mutationAllowExpression'),
  'extproc-mutation-disallow-expression': extProc('mutationDisallowExpression'),
  'extproc-forward-allowed-headers': extProc('forwardAllowedHeaders'),
  'extproc-forward-disallowed-headers': extProc('forwardDisallowedHeaders'),
  'extproc-per-host': extProc('perHost'),
  'route-timeout-ms': { section: 'upstream' },
  'connect-timeout-ms': { section: 'upstream' },
  'upstream-max-connections': { section: 'upstream' },
  'upstream-max-pending': { section: 'upstream' },
  'upstream-credential-bundle': { section: 'upstream' },
  'upstream-trust-bundle': { section: 'upstream' },
  'upstream-spiffe-prefix': { section: 'upstream' },
  'upstream-tls-watch-ms': { section: 'upstream' },
  'tunnel-idle-timeout-ms': { section: 'tunnels', key: 'idleTimeoutMs' },
  'upgrade-allow': { section: 'tunnels' },
  admin: { section: 'admin', key: 'listen' },
  'admin-token': { section: 'admin', key: 'token', secret: true },
  'access-log': { section: 'ops' },
  workers: { section: 'ops' },
  'drain-timeout-ms': { section: 'ops' },
  'drain-idle-grace-ms': { section: 'ops' },
  resolver: { section: 'benchmark' },
  apiserver: { section: 'benchmark' },
  'worker-port': { section: 'benchmark' },
};

function placed<T extends Readonly<Record<ProxyFlagName, FlagSpec>>>(flags: T): { readonly [K in keyof T]: T[K] & Place } {
  return Object.fromEntries(Object.entries(flags).map(([name, spec]) => [name, { ...spec, ...PLACES[name as ProxyFlagName] }])) as {
    readonly [K in keyof T]: T[K] & Place;
  };
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

export const PROXY_FLAG_SET = defineFlagSet({
  command: 'proxy',
  summary: SUMMARY,
  sections: {
    listeners: 'What the proxy listens on for clients (the admin API is under admin).',
    ingress: 'What a client request must look like, and what the ingress does to it.',
    chain: 'User filters, and re-running the chain after a stale answer, connect failure or reset.',
    cache: 'The actor-binding cache in front of ext_proc.',
    extProc: 'The ext_proc server and the ext-proc stage, with the field names of Envoy\'s ExternalProcessor.',
    upstream: 'Connections to the workers: timeouts, pools and mTLS.',
    tunnels: 'WebSocket upgrades and CONNECT tunnels.',
    admin: 'The admin API (/ready, /stats, /metrics, reloads).',
    ops: 'Processes, logs and draining.',
    benchmark: 'Benchmark comparison only: the proxy calling ResumeActor itself.',
  },
  flags: placed(PROXY_FLAGS),
  fileFields: {
    'chain.filters': {
      help: 'User filters in chain order: a module path or { module, options } (relative to the config file); --filter replaces the list.',
      schema: { type: 'array', items: FILTER_ITEM },
      flag: 'filter',
      flat: 'filters',
    },
  },
  variables: LOG_LEVEL_VARIABLE,
});

function filtersOf(context: BuildContext): readonly FilterSpec[] | undefined {
  const list = context.fields['chain.filters'] as readonly (string | { module: string; options?: Record<string, unknown> })[] | undefined;
  if (list === undefined || context.file === undefined) return undefined;
  const dir = path.dirname(path.resolve(context.file));
  const resolve = (module: string): string => (module.startsWith('file:') ? module : path.resolve(dir, module));
  return Object.freeze(list.map((item) => (typeof item === 'string' ? filterSpec(resolve(item)) : filterSpec(resolve(item.module), item.options ?? {}))));
}

function build(values: ProxyFlags, context: BuildContext): ProxyConfig {
  const file = context.file === undefined ? undefined : { path: context.file, env: {}, filters: filtersOf(context) };
  return buildConfig(values, file);
}

/**
 * Reads the proxy's flags (argv over the environment over the `--config` file, nested or flat, over the defaults)
 * into a frozen ProxyConfig. Called again on a reload, with the same argv and environment.
 */
export function readProxyConfigTree(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ComponentConfigRead<ProxyConfig> {
  return readComponentConfig(PROXY_FLAG_SET, build, argv, env);
}
