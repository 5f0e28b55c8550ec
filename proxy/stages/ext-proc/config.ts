/** The ext-proc stage's slice of the proxy's config. */
import type { HostPort } from '../../../lib/address.js';
import type { SpiffeMatch } from '../../../lib/tls/identity.js';
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
