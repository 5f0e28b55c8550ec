/**
 * mTLS on the proxy → ext_proc hop: the proxy presents the client certificate from `--extproc-credential-bundle`,
 * accepts ext_proc only when its chain verifies against `--extproc-trust-bundle` and one of its URI SANs matches
 * `--extproc-spiffe-id` (never by IP or name), TLS 1.3, ALPN `h2`. Both files are watched; a change that loads
 * calls `onReload`, and the client then opens a new channel for new streams while open streams finish on the old
 * one (`grpc-client.ts`). A change that does not load keeps the credentials in use and is logged. A refused
 * ext_proc is logged (at most once a second) with what it presented and why; the streams fail UNAVAILABLE.
 */
import type { Logger } from 'pino';
import { UsageError } from '../../../lib/flags.js';
import { TlsFileError } from '../../../lib/tls/files.js';
import { describeSpiffeMatch } from '../../../lib/tls/identity.js';
import { loadSpiffeClientMaterial, SpiffeChannelCredentials, type SpiffeClientMaterial } from '../../../lib/tls/spiffe-channel-credentials.js';
import { WatchedTlsFiles } from '../../../lib/tls/watched.js';
import { ThrottledWarnings } from '../../../lib/throttled-warnings.js';
import type { ExtProcTlsConfig } from './config.js';

const LABELS = { credentialBundle: '--extproc-credential-bundle', trustBundle: '--extproc-trust-bundle' } as const;

/** Reads both files as the start does; a missing or unusable file is a UsageError naming the flag and the file. */
export function loadExtProcTls(config: ExtProcTlsConfig): SpiffeClientMaterial {
  try {
    return loadSpiffeClientMaterial(config, LABELS);
  } catch (err) {
    if (err instanceof TlsFileError) throw new UsageError(err.message);
    throw err;
  }
}

export class ExtProcChannelTls {
  readonly #watched: WatchedTlsFiles<SpiffeClientMaterial>;
  readonly #warnings: ThrottledWarnings;

  /** Throws a UsageError naming the flag and the file when one is missing or unusable. */
  constructor(
    private readonly config: ExtProcTlsConfig,
    log: Logger,
    onReload: () => void,
  ) {
    this.#warnings = new ThrottledWarnings(log);
    this.#watched = new WatchedTlsFiles({
      paths: [config.credentialBundle, config.trustBundle],
      load: () => loadExtProcTls(config),
      intervalMs: config.watchIntervalMs,
      onReload: (m) => {
        log.info({ identity: m.identity }, 'ext_proc TLS credentials reloaded; new streams use a new channel');
        onReload();
      },
      onError: (err) => log.error({ err: err.message }, 'ext_proc TLS credentials not reloaded; the previous ones stay in use'),
    });
    log.info({ identity: this.#watched.current.identity, extproc: describeSpiffeMatch(config.serverIdentity) }, 'mTLS to ext_proc');
  }

  /** Credentials for a new channel, with the bundles as loaded now. */
  credentials(): SpiffeChannelCredentials {
    return new SpiffeChannelCredentials(this.#watched.current, this.config.serverIdentity, (presented, why) =>
      this.#warnings.warn('refused', { presented, why, expected: describeSpiffeMatch(this.config.serverIdentity) }, 'ext_proc server refused (identity, chain or handshake)'),
    );
  }

  close(): void {
    this.#watched.close();
  }
}
