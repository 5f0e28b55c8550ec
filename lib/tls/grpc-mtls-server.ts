/**
 * A gRPC server port that speaks only mTLS with workload identities: TLS 1.3, ALPN `h2`, a client certificate
 * that verifies against the client CA, and a client identity (a SPIFFE URI SAN) that matches the configured
 * `SpiffeMatch`. The TLS listener is this module's own `tls.Server`; every connection that passes all four checks
 * is handed to the grpc-js server as an already secured socket (grpc-js's connection injector), so calls see the
 * peer certificate in their auth context. A connection that fails is refused before any RPC is read: a plaintext
 * client, a client without a certificate, from another CA, expired (the handshake fails), or with another identity
 * or no `h2` (disconnected right after the handshake). Each refusal is counted and logged (at most one warning a
 * second per kind, with how many were not logged).
 *
 * The credential bundle and the client CA are watched (`watched.ts`): a change that loads is used by new
 * handshakes (`setSecureContext`), open connections and their streams are left alone; a change that does not load
 * keeps the credentials in use and is logged.
 */
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { formatHostPort } from '../address.js';
import { readCredentialBundle, readTrustBundle } from './files.js';
import { describeSpiffeMatch, presentedIdentity, refusePeerIdentity, uriSans, type SpiffeMatch } from './identity.js';
import { WatchedTlsFiles } from './watched.js';
import { ThrottledWarnings } from '../throttled-warnings.js';

export interface MtlsServerSettings {
  /** The server's certificate chain and private key, one PEM file. */
  readonly credentialBundle: string;
  /** CA certificates that sign the accepted clients' certificates. */
  readonly clientCa: string;
  readonly clientIdentity: SpiffeMatch;
  /** How often the two files are checked for changes (ms). */
  readonly watchIntervalMs: number;
}

/** How errors name the two files (their flags). */
export interface MtlsServerLabels {
  readonly credentialBundle: string;
  readonly clientCa: string;
}

/** What became of one incoming connection. */
export type HandshakeOutcome = 'accepted' | 'refused_handshake' | 'refused_identity' | 'refused_alpn';

export const HANDSHAKE_OUTCOMES: readonly HandshakeOutcome[] = Object.freeze(['accepted', 'refused_handshake', 'refused_identity', 'refused_alpn']);

/** Lifetime tallies of the listener's connections by outcome. */
export type HandshakeCounts = Readonly<Record<HandshakeOutcome, number>>;

/** Longest a client may take to complete its handshake. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

interface ServerMaterial {
  readonly options: tls.SecureContextOptions;
  /** The server's own URI SANs (for logs). */
  readonly identity: readonly string[];
}

function loadMaterial(settings: MtlsServerSettings, labels: MtlsServerLabels): ServerMaterial {
  const bundle = readCredentialBundle(settings.credentialBundle, labels.credentialBundle);
  const ca = readTrustBundle(settings.clientCa, labels.clientCa);
  return { options: { cert: bundle.cert, key: bundle.key, ca }, identity: uriSans(bundle.leaf.subjectAltName) };
}

export class MtlsGrpcListener {
  readonly #counts: Record<HandshakeOutcome, number> = { accepted: 0, refused_handshake: 0, refused_identity: 0, refused_alpn: 0 };
  readonly #watched: WatchedTlsFiles<ServerMaterial>;
  readonly #tls: tls.Server;
  readonly #warnings: ThrottledWarnings;

  /** Reads the files now: throws a TlsFileError naming the flag and the file when one is missing or unusable. */
  constructor(
    grpcServer: grpc.Server,
    private readonly settings: MtlsServerSettings,
    private readonly log: Logger,
    labels: MtlsServerLabels,
  ) {
    this.#warnings = new ThrottledWarnings(log);
    this.#watched = new WatchedTlsFiles({
      paths: [settings.credentialBundle, settings.clientCa],
      load: () => loadMaterial(settings, labels),
      intervalMs: settings.watchIntervalMs,
      onReload: (m) => {
        this.#tls.setSecureContext(m.options);
        log.info({ identity: m.identity }, 'ext_proc TLS credentials reloaded');
      },
      onError: (err) => log.error({ err: err.message }, 'ext_proc TLS credentials not reloaded; the previous ones stay in use'),
    });
    const injector = grpcServer.createConnectionInjector(grpc.ServerCredentials.createInsecure());
    this.#tls = tls.createServer({
      ...this.#watched.current.options,
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.3',
      ALPNProtocols: ['h2'],
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    });
    this.#tls.on('secureConnection', (socket: tls.TLSSocket) => {
      const outcome = this.#judge(socket);
      this.#counts[outcome]++;
      if (outcome === 'accepted') injector.injectConnection(socket);
      else socket.destroy();
    });
    this.#tls.on('tlsClientError', (err: Error, socket: tls.TLSSocket) => {
      this.#counts.refused_handshake++;
      this.#warnings.warn('handshake', { peer: socket.remoteAddress, err: err.message }, 'ext_proc listener refused a TLS handshake');
    });
  }

  #judge(socket: tls.TLSSocket): HandshakeOutcome {
    if (socket.alpnProtocol !== 'h2') {
      this.#warnings.warn('alpn', { peer: socket.remoteAddress, alpn: socket.alpnProtocol || null }, 'ext_proc listener refused a client that did not negotiate h2');
      return 'refused_alpn';
    }
    const cert = socket.getPeerCertificate();
    const why = refusePeerIdentity(cert.subjectaltname, this.settings.clientIdentity);
    if (why === undefined) return 'accepted';
    this.#warnings.warn(
      'identity',
      { peer: socket.remoteAddress, presented: presentedIdentity(cert), expected: describeSpiffeMatch(this.settings.clientIdentity), why },
      'ext_proc listener refused a client identity',
    );
    return 'refused_identity';
  }

  /** Binds `host:port` (port 0: the OS chooses); resolves with the bound `host:port`. */
  async listen(host: string, port: number): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.#tls.once('error', reject);
      this.#tls.listen(port, host, () => {
        this.#tls.removeListener('error', reject);
        resolve();
      });
    });
    const bound = this.#tls.address();
    const boundPort = bound !== null && typeof bound === 'object' ? bound.port : port;
    this.log.info(
      { identity: this.#watched.current.identity, clientIdentity: describeSpiffeMatch(this.settings.clientIdentity) },
      'ext_proc listener: mTLS (TLS 1.3, ALPN h2, client certificate required)',
    );
    return formatHostPort(host, boundPort);
  }

  get counts(): HandshakeCounts {
    return { ...this.#counts };
  }

  /** Credential reloads (successful and failed) since start. */
  get reloads(): { readonly reloads: number; readonly errors: number } {
    return this.#watched.counts;
  }

  /** Stops accepting connections and watching the files; open connections are closed by the gRPC server. */
  close(): void {
    this.#watched.close();
    this.#tls.close();
  }
}
