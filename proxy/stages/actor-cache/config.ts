/** The actor-cache stage's slice of the proxy's config: its flags (`cache` section) and what they build. */
import type { FlagSpecs, FlagValues } from '../../../lib/flags.js';

/** The actor cache's flags, composed into the proxy's flags by `proxy/config.ts`. */
export const ACTOR_CACHE_FLAGS = {
  'actor-cache': {
    type: 'choice',
    env: 'PROXY_ACTOR_CACHE',
    envAliases: ['ACTOR_CACHE'],
    section: 'cache',
    key: 'enabled',
    choices: ['on', 'off'],
    default: 'on',
    help: 'Cache actor-to-worker bindings learned from ext_proc (off: every request goes through ext_proc).',
  },
  'cache-ttl-ms': { type: 'number', env: 'PROXY_CACHE_TTL_MS', section: 'cache', default: 5000, help: 'How long a learned binding is served.' },
  'cache-max-entries': { type: 'number', env: 'PROXY_CACHE_MAX_ENTRIES', section: 'cache', default: 100000, min: 1, help: 'The binding cache LRU bound.' },
  'cache-refresh-ahead': {
    type: 'choice',
    env: 'PROXY_CACHE_REFRESH_AHEAD',
    section: 'cache',
    choices: ['on', 'off'],
    default: 'on',
    help: 'Re-validate a binding that serves a hit in the last 20% of its TTL with one background ext_proc exchange (idle bindings just expire).',
  },
} as const satisfies FlagSpecs;

/** `--actor-cache`, `--cache-ttl-ms`, `--cache-max-entries`, `--cache-refresh-ahead`. */
export interface CacheConfig {
  readonly enabled: boolean;
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly refreshAhead: boolean;
}

/** The cache's slice from its flag values. */
export function buildCacheConfig(flags: FlagValues<typeof ACTOR_CACHE_FLAGS>): CacheConfig {
  return Object.freeze({
    enabled: flags['actor-cache'] === 'on',
    ttlMs: flags['cache-ttl-ms'],
    maxEntries: flags['cache-max-entries'],
    refreshAhead: flags['cache-refresh-ahead'] === 'on',
  });
}
