/**
 * The ingress's slice of the proxy's config (the `ingress` section): what a client request must look like and what
 * the protocol engines and the request lifecycle do to it — header hygiene, forwarded headers and request ids,
 * timeouts, HTTP/2 stream limits, 421 on a misdirected request, the actor host suffix — with their flags, composed
 * into the proxy's flags by `proxy/config.ts`. The listeners' slice is `listeners-config.ts`.
 */
import { UsageError, type FlagSpecs, type FlagValues } from '../../lib/flags.js';
import { DEFAULT_ACTOR_SUFFIX, normaliseSuffix } from '../../lib/actor-ref.js';
import { INTERNAL_HEADERS } from '../../lib/wire-contract.js';
import { isLowerCaseToken } from '../http/token.js';
import type { DRAIN_FLAGS } from '../ops/config.js';
import { buildUpgradeTokens, type TUNNEL_FLAGS } from '../tunnels/config.js';
import type { IngressConfig } from './ingress.js';
import type { LifecycleConfig } from './lifecycle.js';
import type { LISTENER_FLAGS } from './listeners-config.js';

/** How the ingress reads and forwards client requests (the protocol engines and the request lifecycle). */
export type IngressSettings = IngressConfig &
  LifecycleConfig & {
    /** Normalised (no dots at the ends, lower case). */
    readonly actorSuffix: string;
  };

/** What one client connection may carry: HTTP/2 streams at once, and requests for another TLS server name. */
export const CONNECTION_FLAGS = {
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
} as const satisfies FlagSpecs;

/** The request bodies the lifecycle retains for a replay: in the `chain` section, beside the re-run policy that replays them. */
export const REPLAY_BODY_FLAGS = {
  'max-replay-body-bytes': {
    type: 'number',
    env: 'PROXY_MAX_REPLAY_BODY_BYTES',
    section: 'chain',
    default: 1048576,
    help: 'Request bodies up to this size are retained so a re-run can replay them; larger bodies stream through and cannot be replayed.',
  },
} as const satisfies FlagSpecs;

/** Header hygiene, forwarded headers and request ids, and the time a request may take to arrive. */
export const INGRESS_FLAGS = {
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
} as const satisfies FlagSpecs;

/** The DNS suffix under which hosts name actors. */
export const ACTOR_SUFFIX_FLAGS = {
  'actor-suffix': { type: 'string', env: 'PROXY_ACTOR_SUFFIX', envAliases: ['ACTOR_SUFFIX'], section: 'ingress', default: DEFAULT_ACTOR_SUFFIX, help: 'DNS suffix under which hosts name actors.' },
} as const satisfies FlagSpecs;

/**
 * The ingress's own flags, and what it reads of other sections': whether there is an HTTPS listener (421 needs
 * one), how long an idle connection may stay for one more request on a drain, and the upgrade tokens forwarded.
 */
export type IngressFlags = FlagValues<typeof CONNECTION_FLAGS & typeof REPLAY_BODY_FLAGS & typeof INGRESS_FLAGS & typeof ACTOR_SUFFIX_FLAGS> &
  Pick<FlagValues<typeof LISTENER_FLAGS>, 'tls-listen'> &
  Pick<FlagValues<typeof DRAIN_FLAGS>, 'drain-idle-grace-ms'> &
  Pick<FlagValues<typeof TUNNEL_FLAGS>, 'upgrade-allow'>;

/** The ingress's slice from its flag values. */
export function buildIngressSettings(flags: IngressFlags): IngressSettings {
  const extra = flags['strip-headers'].map((h) => h.toLowerCase());
  for (const h of extra) if (!isLowerCaseToken(h)) throw new UsageError(`--strip-headers: "${h}" is not a header name`);
  const requestTimeoutMs = flags['request-timeout-ms'];
  if (requestTimeoutMs !== 0 && requestTimeoutMs < flags['headers-timeout-ms']) {
    throw new UsageError('--request-timeout-ms must be 0 or at least --headers-timeout-ms');
  }
  if (flags['misdirected-421'] === 'on' && flags['tls-listen'] === undefined) {
    throw new UsageError('--misdirected-421 needs --tls-listen (it compares a request with the TLS SNI of its connection)');
  }
  return Object.freeze({
    h2MaxConcurrentStreams: flags['h2-max-concurrent-streams'],
    headersTimeoutMs: flags['headers-timeout-ms'],
    requestTimeoutMs,
    keepAliveTimeoutMs: flags['keep-alive-timeout-ms'],
    drainIdleGraceMs: flags['drain-idle-grace-ms'],
    stripHeaders: Object.freeze([...new Set([...INTERNAL_HEADERS, ...extra])]),
    xffTrustedHops: flags['xff-trusted-hops'],
    maxReplayBodyBytes: flags['max-replay-body-bytes'],
    upgradeTokens: buildUpgradeTokens(flags),
    misdirected421: flags['misdirected-421'] === 'on',
    requestIdTrusted: flags['request-id-trusted'] === 'auto' ? flags['xff-trusted-hops'] > 0 : flags['request-id-trusted'] === 'on',
    actorSuffix: normaliseSuffix(flags['actor-suffix']),
  });
}
