/** `npm run fleet`'s flags (`scripts/start-fleet.ts`), each with its environment variable. */
import type { FlagSpecs } from '../../lib/flags.js';
import { FLEET_MODES, PLAN_DEFAULTS } from './haproxy-config.js';

export const FLEET_FLAGS = {
  replicas: { type: 'number', env: 'FLEET_REPLICAS', default: 3, min: 1, max: 16, help: 'proxy replicas behind HAProxy' },
  mode: {
    type: 'choice',
    env: 'FLEET_MODE',
    choices: FLEET_MODES,
    default: 'affinity',
    help: 'affinity: HTTP, consistent hash of Host; sni: TLS passthrough, consistent hash of the SNI (replicas answer 421 to coalesced requests); roundrobin: no affinity',
  },
  port: { type: 'number', env: 'FLEET_PORT', default: 8080, max: 65535, help: "HAProxy's port on 127.0.0.1 (0: a free one)" },
  actors: { type: 'number', env: 'APISERVER_ACTORS', default: 64, min: 1, help: 'actors the stub seeds (actor-000 …)' },
  'cache-ttl-ms': { type: 'number', env: 'PROXY_CACHE_TTL_MS', default: 5000, min: 1, help: "each replica's binding TTL" },
  'hash-balance-factor': {
    type: 'number',
    env: 'FLEET_HASH_BALANCE_FACTOR',
    default: PLAN_DEFAULTS.hashBalanceFactor,
    help: 'a replica takes at most this % of the average load in the hashing modes (0: no bound)',
  },
  'drain-delay-ms': { type: 'number', env: 'PROXY_DRAIN_DELAY_MS', default: 2000, help: 'how long a replica serves on with /ready failing after SIGTERM' },
  tls: {
    type: 'choice',
    env: 'STACK_TLS',
    choices: ['on', 'off'],
    default: 'on',
    help: 'on: mTLS on every internal hop (proxy → extproc, proxy → workers, extproc → control plane) with development certificates made at start; off: plaintext',
  },
} as const satisfies FlagSpecs;
