/**
 * The upstream slice of the proxy's config (the `upstream` section): how the router reaches the workers — its
 * timeouts, the per-worker pools' bounds and mTLS — and its flags, composed into the proxy's flags by
 * `proxy/config.ts`.
 */
import { UsageError, type FlagSpecs, type FlagValues } from '../../lib/flags.js';
import { DEFAULT_SPIFFE_PREFIX, validateSpiffePrefix } from '../../lib/tls/identity.js';
import { DEFAULT_WATCH_INTERVAL_MS } from '../../lib/tls/watched.js';
import type { UpstreamTlsSettings } from './tls.js';

/** mTLS to the workers: the proxy's credential bundle, the CAs it trusts, the SPIFFE prefix it accepts. */
export type UpstreamTlsConfig = UpstreamTlsSettings;

export interface UpstreamConfig {
  /** Upstream response headers must arrive within this time (504 otherwise). */
  readonly routeTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Connections to one worker at most. */
  readonly maxConnections: number;
  /** Requests waiting for a connection to one worker at most. */
  readonly maxPending: number;
  /** mTLS to the workers; undefined: plaintext. */
  readonly tls: UpstreamTlsConfig | undefined;
}

/** The upstream's timeouts. */
export const UPSTREAM_TIMEOUT_FLAGS = {
  'route-timeout-ms': { type: 'number', env: 'PROXY_ROUTE_TIMEOUT_MS', section: 'upstream', default: 10000, min: 1, help: 'Upstream response headers must arrive within this time (504 otherwise).' },
  'connect-timeout-ms': {
    type: 'number',
    env: 'PROXY_CONNECT_TIMEOUT_MS',
    section: 'upstream',
    default: 1000,
    min: 1,
    help: 'Upstream connect timeout, the TLS handshake included (a connect failure, which re-runs): must be below --rerun-budget-ms.',
  },
} as const satisfies FlagSpecs;

/** The bounds of each worker's pool. */
export const UPSTREAM_POOL_FLAGS = {
  'upstream-max-connections': {
    type: 'number',
    env: 'PROXY_UPSTREAM_MAX_CONNECTIONS',
    section: 'upstream',
    default: 128,
    min: 1,
    help: 'Connections the proxy opens to one worker at most; further requests wait in that worker\'s queue.',
  },
  'upstream-max-pending': {
    type: 'number',
    env: 'PROXY_UPSTREAM_MAX_PENDING',
    section: 'upstream',
    default: 1024,
    help: 'Requests that may wait for a connection to one worker; beyond that a request gets 503 PROXY_ERR_UPSTREAM_OVERFLOW at once.',
  },
} as const satisfies FlagSpecs;

/** mTLS to the workers. */
export const UPSTREAM_TLS_FLAGS = {
  'upstream-credential-bundle': {
    type: 'string',
    env: 'PROXY_UPSTREAM_CREDENTIAL_BUNDLE',
    section: 'upstream',
    default: '',
    help: 'PEM file with the proxy\'s client certificate (chain) and private key for mTLS to the workers; empty: plaintext to the workers.',
  },
  'upstream-trust-bundle': {
    type: 'string',
    env: 'PROXY_UPSTREAM_TRUST_BUNDLE',
    section: 'upstream',
    default: '',
    help: 'PEM file with the CA certificates that sign the workers\' certificates (required with --upstream-credential-bundle).',
  },
  'upstream-spiffe-prefix': {
    type: 'string',
    env: 'PROXY_UPSTREAM_SPIFFE_PREFIX',
    section: 'upstream',
    default: DEFAULT_SPIFFE_PREFIX,
    help: 'A worker is accepted when one of its certificate\'s URI SANs starts with this prefix (never checked by IP or name).',
  },
  'upstream-tls-watch-ms': {
    type: 'number',
    env: 'PROXY_UPSTREAM_TLS_WATCH_MS',
    section: 'upstream',
    default: DEFAULT_WATCH_INTERVAL_MS,
    min: 10,
    help: 'How often the two bundle files are checked for changes; new connections use new credentials, open ones keep theirs.',
  },
} as const satisfies FlagSpecs;

/** mTLS to the workers from its flag values; undefined: plaintext (no credential bundle). */
export function buildUpstreamTlsConfig(flags: FlagValues<typeof UPSTREAM_TLS_FLAGS>): UpstreamTlsConfig | undefined {
  const credentialBundle = flags['upstream-credential-bundle'];
  const trustBundle = flags['upstream-trust-bundle'];
  if (credentialBundle === '') {
    if (trustBundle !== '') throw new UsageError('--upstream-trust-bundle needs --upstream-credential-bundle (an empty credential bundle means plaintext)');
    return undefined;
  }
  if (trustBundle === '') throw new UsageError('--upstream-credential-bundle needs --upstream-trust-bundle');
  let spiffePrefix: string;
  try {
    spiffePrefix = validateSpiffePrefix(flags['upstream-spiffe-prefix']);
  } catch (err) {
    throw new UsageError(`--upstream-spiffe-prefix: ${(err as Error).message}`);
  }
  return Object.freeze({ credentialBundle, trustBundle, spiffePrefix, watchIntervalMs: flags['upstream-tls-watch-ms'] });
}

/** The upstream slice from its flag values. */
export function buildUpstreamConfig(flags: FlagValues<typeof UPSTREAM_TIMEOUT_FLAGS & typeof UPSTREAM_POOL_FLAGS & typeof UPSTREAM_TLS_FLAGS>): UpstreamConfig {
  return Object.freeze({
    routeTimeoutMs: flags['route-timeout-ms'],
    connectTimeoutMs: flags['connect-timeout-ms'],
    maxConnections: flags['upstream-max-connections'],
    maxPending: flags['upstream-max-pending'],
    tls: buildUpstreamTlsConfig(flags),
  });
}
