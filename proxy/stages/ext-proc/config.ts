/** The ext-proc stage's slice of the proxy's config, with the flags of the hop's mTLS. */
import type { HostPort } from '../../../lib/address.js';
import { UsageError, type FlagSpecs, type FlagValues } from '../../../lib/flags.js';
import { devIdentities } from '../../../lib/tls/dev-certs.js';
import { parseSpiffeMatch, type SpiffeMatch } from '../../../lib/tls/identity.js';
import { DEFAULT_WATCH_INTERVAL_MS } from '../../../lib/tls/watched.js';
import type { ExtProcSettings } from './settings.js';

/** mTLS to ext_proc: the proxy's credential bundle, the CAs it trusts, and who ext_proc must be. */
export interface ExtProcTlsConfig {
  readonly credentialBundle: string;
  readonly trustBundle: string;
  /** Who ext_proc must be (`--extproc-spiffe-id`). */
  readonly serverIdentity: SpiffeMatch;
  readonly watchIntervalMs: number;
}

/** `--extproc`, Envoy's ExternalProcessor settings (`settings.ts`), the hop's mTLS, and retrying a stream that could not be opened. */
export interface ExtProcStageConfig {
  readonly address: HostPort;
  readonly settings: ExtProcSettings;
  /** mTLS to ext_proc (`--extproc-credential-bundle`, ...); undefined: plaintext. */
  readonly tls: ExtProcTlsConfig | undefined;
  /** `--extproc-retry-max-waiting`: requests waiting to retry their stream at once, at most (0: never retried). */
  readonly retryMaxWaiting: number;
  /** `--extproc-max-streams`: misses in their request phase at once, at most (0: no bound). */
  readonly maxStreams: number;
  /** `--extproc-queue-max-waiting`: misses waiting for one of those streams at once, at most. */
  readonly queueMaxWaiting: number;
  /** `--extproc-queue-timeout-ms`: the longest a miss waits for one of those streams. */
  readonly queueTimeoutMs: number;
}

/** mTLS to ext_proc: its flags (`extProc` section), composed into the proxy's flags by `proxy/config.ts`. */
export const EXT_PROC_TLS_FLAGS = {
  'extproc-credential-bundle': {
    type: 'string',
    env: 'PROXY_EXTPROC_CREDENTIAL_BUNDLE',
    section: 'extProc',
    key: 'credentialBundle',
    default: '',
    help: 'PEM file with the proxy\'s client certificate (chain) and private key for mTLS to ext_proc (TLS 1.3, ALPN h2); empty: plaintext, with a warning at start-up.',
  },
  'extproc-trust-bundle': {
    type: 'string',
    env: 'PROXY_EXTPROC_TRUST_BUNDLE',
    section: 'extProc',
    key: 'trustBundle',
    default: '',
    help: 'PEM file with the CA certificates that sign extproc\'s certificate (required with --extproc-credential-bundle).',
  },
  'extproc-spiffe-id': {
    type: 'string',
    env: 'PROXY_EXTPROC_SPIFFE_ID',
    section: 'extProc',
    key: 'spiffeId',
    default: devIdentities().extproc,
    help: 'ext_proc is accepted when one of its certificate\'s URI SANs is this SPIFFE ID, or starts with it when it ends in "/" (never checked by IP or name).',
  },
  'extproc-tls-watch-ms': {
    type: 'number',
    env: 'PROXY_EXTPROC_TLS_WATCH_MS',
    section: 'extProc',
    key: 'tlsWatchMs',
    default: DEFAULT_WATCH_INTERVAL_MS,
    min: 10,
    help: 'How often the two ext_proc bundle files are checked for changes; a change opens a new channel for new streams, open streams finish on the old one.',
  },
} as const satisfies FlagSpecs;

/** mTLS to ext_proc from its flag values; undefined: plaintext (neither bundle). */
export function buildExtProcTlsConfig(flags: FlagValues<typeof EXT_PROC_TLS_FLAGS>): ExtProcTlsConfig | undefined {
  const credentialBundle = flags['extproc-credential-bundle'];
  const trustBundle = flags['extproc-trust-bundle'];
  if (credentialBundle === '' && trustBundle === '') return undefined;
  if (credentialBundle === '' || trustBundle === '') throw new UsageError('--extproc-credential-bundle and --extproc-trust-bundle go together');
  let serverIdentity: SpiffeMatch;
  try {
    serverIdentity = parseSpiffeMatch(flags['extproc-spiffe-id']);
  } catch (err) {
    throw new UsageError(`--extproc-spiffe-id: ${(err as Error).message}`);
  }
  return Object.freeze({ credentialBundle, trustBundle, serverIdentity, watchIntervalMs: flags['extproc-tls-watch-ms'] });
}
