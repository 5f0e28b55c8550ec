/**
 * The resolver slice of the proxy's config, and the flags that set it: benchmark-only (the comparison arm in which
 * the proxy calls ResumeActor itself), kept out of the production flags in a section of their own.
 */
import type { FlagSpecs, FlagValues } from '../../../lib/flags.js';
import { parseHostPort, type HostPort } from '../../../lib/address.js';

export const BENCHMARK_RESOLVER_FLAGS = {
  resolver: {
    type: 'choice',
    env: 'PROXY_RESOLVER',
    section: 'benchmark',
    choices: ['extproc', 'apiserver'],
    default: 'extproc',
    help: 'Who resolves a cache miss: the ext_proc server (production), or the proxy calling ResumeActor itself (benchmark comparison only).',
  },
  apiserver: { type: 'string', env: 'PROXY_APISERVER', section: 'benchmark', default: '127.0.0.1:50052', help: 'Control plane gRPC HOST:PORT (read only with --resolver apiserver).' },
  'worker-port': {
    type: 'number',
    env: 'PROXY_WORKER_PORT',
    envAliases: ['WORKER_PORT'],
    section: 'benchmark',
    default: 8443,
    min: 1,
    max: 65535,
    help: 'The port workers listen on (read only with --resolver apiserver, to build worker addresses).',
  },
} as const satisfies FlagSpecs;

/** Who resolves a cache miss: `extproc` (production), or `apiserver` (the benchmark's comparison: ResumeActor from the proxy). */
export interface ResolverConfig {
  readonly kind: 'extproc' | 'apiserver';
  /** The control plane (`apiserver` only). */
  readonly apiserver: HostPort;
  /** The port every worker listens on (`apiserver` only: it builds the worker address). */
  readonly workerPort: number;
}

/** The resolver slice from its flag values. */
export function buildResolverConfig(flags: FlagValues<typeof BENCHMARK_RESOLVER_FLAGS>): ResolverConfig {
  return Object.freeze({ kind: flags.resolver, apiserver: parseHostPort(flags.apiserver, '--apiserver'), workerPort: flags['worker-port'] });
}
