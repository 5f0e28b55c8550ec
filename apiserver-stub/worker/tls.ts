/**
 * The worker tunnel's mTLS, as the platform's worker tunnel does it: the worker presents its own certificate (whose
 * only SAN is its SPIFFE URI), requires a client certificate that verifies against the client CA, and accepts
 * exactly one client identity (the proxy's SPIFFE URI). A client with a certificate from another CA fails the
 * handshake; one with another identity is disconnected as soon as the handshake completes, before any request is
 * read. Both are counted. The two files are watched and a change applies to the next connection.
 */
import type tls from 'node:tls';
import type { Logger } from '../../lib/logger.js';
import { readCredentialBundle, readTrustBundle, TlsFileError } from '../../lib/tls/files.js';
import { hasIdentity, presentedIdentity, validateSpiffeId } from '../../lib/tls/identity.js';
import { UsageError } from '../../lib/flags.js';
import { DEFAULT_WATCH_INTERVAL_MS, WatchedTlsFiles } from '../../lib/tls/watched.js';

export interface WorkerTlsSettings {
  /** The worker's certificate (chain) and private key, one PEM file. */
  readonly credentialBundle: string;
  /** CA certificates that sign the accepted client's certificate. */
  readonly clientCa: string;
  /** The one client SPIFFE URI accepted. */
  readonly clientIdentity: string;
  readonly watchIntervalMs?: number;
}

/** Handshakes (lifetime tallies), shared by every worker of a process; apiserver-stub reports them in /stats as `workerTls` (since the last reset) and in /metrics. */
export class WorkerTlsCounters {
  accepted = 0;
  /** Client certificate missing or not signed by the client CA (or the handshake failed otherwise). */
  refusedHandshake = 0;
  /** Client certificate valid but not the configured client identity. */
  refusedIdentity = 0;

  snapshot(): { accepted: number; refusedHandshake: number; refusedIdentity: number } {
    return { accepted: this.accepted, refusedHandshake: this.refusedHandshake, refusedIdentity: this.refusedIdentity };
  }
}

function loadServerOptions(settings: WorkerTlsSettings): tls.SecureContextOptions {
  const bundle = readCredentialBundle(settings.credentialBundle, 'worker credential bundle');
  const ca = readTrustBundle(settings.clientCa, 'worker client CA');
  return { cert: bundle.cert, key: bundle.key, ca };
}

/** One process's worker TLS: the current server options, and the hooks every worker listener installs. */
export class WorkerTls {
  readonly #watched: WatchedTlsFiles<tls.SecureContextOptions>;
  readonly #servers = new Set<tls.Server>();

  /** Throws a TlsFileError naming the file when one is missing or unusable. */
  constructor(
    private readonly settings: WorkerTlsSettings,
    readonly counters: WorkerTlsCounters,
    private readonly log: Logger,
  ) {
    this.#watched = new WatchedTlsFiles({
      paths: [settings.credentialBundle, settings.clientCa],
      load: () => loadServerOptions(settings),
      intervalMs: settings.watchIntervalMs ?? DEFAULT_WATCH_INTERVAL_MS,
      onReload: (options) => {
        for (const server of this.#servers) server.setSecureContext(options);
        log.info('worker TLS credentials reloaded');
      },
      onError: (err) => log.error({ err: err.message }, 'worker TLS credentials not reloaded; the previous ones stay in use'),
    });
  }

  /** Options for `tls.createServer` / `https.createServer`. */
  serverOptions(): tls.TlsOptions {
    return { ...this.#watched.current, requestCert: true, rejectUnauthorized: true, ALPNProtocols: ['http/1.1'], minVersion: 'TLSv1.2' };
  }

  /** Counts and enforces the identity on `server` until it closes. */
  attach(server: tls.Server, worker: string): void {
    this.#servers.add(server);
    server.on('close', () => this.#servers.delete(server));
    server.on('secureConnection', (socket: tls.TLSSocket) => {
      const cert = socket.getPeerCertificate();
      if (hasIdentity(cert.subjectaltname, this.settings.clientIdentity)) {
        this.counters.accepted++;
        return;
      }
      this.counters.refusedIdentity++;
      this.log.warn({ worker, presented: presentedIdentity(cert), expected: this.settings.clientIdentity }, 'worker refused a client identity');
      socket.destroy();
    });
    server.on('tlsClientError', (err: Error) => {
      this.counters.refusedHandshake++;
      this.log.debug({ worker, err: err.message }, 'worker TLS handshake failed');
    });
  }

  close(): void {
    this.#watched.close();
  }
}

/**
 * The worker TLS settings from three flag values (`names` are the flags, for messages): all empty means plain
 * HTTP; otherwise all three are required and the identity must be a SPIFFE URI. Throws UsageError.
 */
export function workerTlsSettings(
  values: { readonly credentialBundle: string; readonly clientCa: string; readonly clientIdentity: string },
  names: { readonly credentialBundle: string; readonly clientCa: string; readonly clientIdentity: string },
): WorkerTlsSettings | undefined {
  const given = (Object.keys(values) as (keyof typeof values)[]).filter((k) => values[k] !== '');
  if (given.length === 0) return undefined;
  const missing = (Object.keys(values) as (keyof typeof values)[]).filter((k) => values[k] === '');
  if (missing.length > 0) throw new UsageError(`${names[given[0]!]} needs ${missing.map((k) => names[k]).join(' and ')}`);
  try {
    validateSpiffeId(values.clientIdentity);
  } catch (err) {
    throw new UsageError(`${names.clientIdentity}: ${(err as Error).message}`);
  }
  return Object.freeze({ ...values });
}

/** Starts a process's worker TLS; a missing or unusable file is a UsageError naming it. */
export function startWorkerTls(settings: WorkerTlsSettings, log: Logger, counters = new WorkerTlsCounters()): WorkerTls {
  try {
    return new WorkerTls(settings, counters, log);
  } catch (err) {
    if (err instanceof TlsFileError) throw new UsageError(err.message);
    throw err;
  }
}
