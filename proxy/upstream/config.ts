/** The upstream slice of the proxy's config: how the router reaches the workers, and the flags of its mTLS. */
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

/** mTLS to the workers: its flags (`upstream` section), composed into the proxy's flags by `proxy/config.ts`. */
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
