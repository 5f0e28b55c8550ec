/** The egress verdict cache's slice of the proxy's config: its flags (`egressCache` section) and what they build. */
import type { FlagSpecs, FlagValues } from '../../lib/flags.js';

/** The egress verdict cache's three flags, together; composed into the proxy's flags by `proxy/config.ts`. */
export const EGRESS_CACHE_FLAGS = {
  'egress-cache': {
    type: 'choice',
    env: 'PROXY_EGRESS_CACHE',
    section: 'egressCache',
    key: 'enabled',
    choices: ['on', 'off'],
    default: 'on',
    help: 'Cache egress verdicts (allowed and policy-denied) per actor certificate and destination; concurrent misses share one ext_proc exchange (off: every CONNECT goes through ext_proc).',
  },
  'egress-cache-ttl-ms': {
    type: 'number',
    env: 'PROXY_EGRESS_CACHE_TTL_MS',
    section: 'egressCache',
    default: 5000,
    min: 1,
    help: 'How long an egress verdict is served at most (never past the actor certificate\'s expiry), and how long the tunnels it opened last without a re-validation (at 80% of it, with the cache off too): the longest a policy change, a suspension or a deletion waits to take effect, new CONNECTs and open tunnels alike (plus one ext_proc round trip).',
  },
  'egress-cache-max-entries': { type: 'number', env: 'PROXY_EGRESS_CACHE_MAX_ENTRIES', section: 'egressCache', default: 100000, min: 1, help: 'The egress verdict cache LRU bound.' },
} as const satisfies FlagSpecs;

/** `--egress-cache`, `--egress-cache-ttl-ms`, `--egress-cache-max-entries`. */
export interface EgressCacheConfig {
  /** Off: every CONNECT takes the slow path, nothing is stored. */
  readonly enabled: boolean;
  /** How long a verdict is served at most (never past the certificate's NotAfter). */
  readonly ttlMs: number;
  /** The LRU bound. */
  readonly maxEntries: number;
}

/** The egress verdict cache's slice from its flag values. */
export function buildEgressCacheConfig(flags: FlagValues<typeof EGRESS_CACHE_FLAGS>): EgressCacheConfig {
  return Object.freeze({
    enabled: flags['egress-cache'] === 'on',
    ttlMs: flags['egress-cache-ttl-ms'],
    maxEntries: flags['egress-cache-max-entries'],
  });
}
