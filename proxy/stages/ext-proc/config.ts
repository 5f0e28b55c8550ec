/**
 * The ext-proc stage's slice of the proxy's config (the `extProc` section) and its flags: the processor's address,
 * the limits on streams and retries, and the hop's mTLS here; Envoy's ExternalProcessor settings in `settings.ts`.
 * `proxy/config.ts` composes them into the proxy's flags.
 */
import { parseHostPort, type HostPort } from '../../../lib/address.js';
import { UsageError, type FlagSpecs, type FlagValues } from '../../../lib/flags.js';
import { devIdentities } from '../../../lib/tls/dev-certs.js';
import { parseSpiffeMatch, type SpiffeMatch } from '../../../lib/tls/identity.js';
import { DEFAULT_WATCH_INTERVAL_MS } from '../../../lib/tls/watched.js';
import { buildExtProcSettings, EXT_PROC_FLAGS, type ExtProcSettings } from './settings.js';

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

/** Misses in their ext_proc request phase at once: extproc's own caps (`--parked-max`, `--extproc-retry-max-waiting`) are 1024. */
const DEFAULT_EXTPROC_MAX_STREAMS = 256;

/** Where the processor is. */
export const EXT_PROC_ADDRESS_FLAGS = {
  extproc: { type: 'string', env: 'PROXY_EXTPROC', section: 'extProc', key: 'address', default: '127.0.0.1:50051', help: 'ext_proc gRPC server HOST:PORT.' },
} as const satisfies FlagSpecs;

/** Retrying a stream that could not be opened, and the bound on streams in use with its queue. */
export const EXT_PROC_LIMIT_FLAGS = {
  'extproc-retry-max-waiting': {
    type: 'number',
    env: 'PROXY_EXTPROC_RETRY_MAX_WAITING',
    section: 'extProc',
    key: 'retryMaxWaiting',
    default: 1024,
    min: 0,
    help: 'A miss whose ext_proc stream cannot be opened (UNAVAILABLE: the processor restarting) is retried on a fresh stream within --rerun-budget-ms; at most this many requests wait to retry at once, more fail at once (0: never retry).',
  },
  'extproc-max-streams': {
    type: 'number',
    env: 'PROXY_EXTPROC_MAX_STREAMS',
    section: 'extProc',
    key: 'maxStreams',
    default: DEFAULT_EXTPROC_MAX_STREAMS,
    min: 0,
    max: 65536,
    help: 'Misses (requests that need an ext_proc stream) in their request phase at once, at most; more wait their turn in a FIFO queue. 0: no bound.',
  },
  'extproc-queue-max-waiting': {
    type: 'number',
    env: 'PROXY_EXTPROC_QUEUE_MAX_WAITING',
    section: 'extProc',
    key: 'queueMaxWaiting',
    default: 1024,
    min: 0,
    help: 'Misses waiting in that queue at once, at most; one more is answered 503 PROXY_ERR_EXTPROC_QUEUE_FULL with Retry-After at once (0: no queue).',
  },
  'extproc-queue-timeout-ms': {
    type: 'number',
    env: 'PROXY_EXTPROC_QUEUE_TIMEOUT_MS',
    section: 'extProc',
    key: 'queueTimeoutMs',
    default: 1000,
    min: 1,
    help: 'The longest a miss waits in that queue, and never beyond its --rerun-budget-ms; then 503 PROXY_ERR_EXTPROC_QUEUE_TIMEOUT with Retry-After.',
  },
} as const satisfies FlagSpecs;

/** mTLS to ext_proc. */
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

/** Every flag of the ext-proc slice. */
type ExtProcStageFlags = FlagValues<typeof EXT_PROC_ADDRESS_FLAGS & typeof EXT_PROC_FLAGS & typeof EXT_PROC_LIMIT_FLAGS & typeof EXT_PROC_TLS_FLAGS>;

/** The ext-proc slice from its flag values. */
export function buildExtProcStageConfig(flags: ExtProcStageFlags): ExtProcStageConfig {
  return Object.freeze({
    address: parseHostPort(flags.extproc, '--extproc'),
    settings: buildExtProcSettings(flags),
    tls: buildExtProcTlsConfig(flags),
    retryMaxWaiting: flags['extproc-retry-max-waiting'],
    maxStreams: flags['extproc-max-streams'],
    queueMaxWaiting: flags['extproc-queue-max-waiting'],
    queueTimeoutMs: flags['extproc-queue-timeout-ms'],
  });
}
