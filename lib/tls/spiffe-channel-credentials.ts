/**
 * gRPC channel credentials for a client that accepts its server by workload identity (the proxy dialling
 * extproc): the client's certificate and the trust bundle as loaded when the credentials were made, TLS 1.3, ALPN
 * `h2`, the server's chain verified against the trust bundle and one of its URI SANs matching the configured
 * `SpiffeMatch` (never its IP or name: extproc's certificate carries only its SPIFFE URI). A server that fails
 * either check is reported to `onRefused` with what it presented and why, and the connection fails.
 */
import tls from 'node:tls';
import { readCredentialBundle, readTrustBundle } from './files.js';
import { HandshakeTlsCredentials } from './grpc-channel-credentials.js';
import { presentedIdentity, refusePeerIdentity, uriSans, type SpiffeMatch } from './identity.js';

/** The client's side of a handshake, loaded from its two files. */
export interface SpiffeClientMaterial {
  readonly context: tls.SecureContext;
  /** The client's own URI SANs (for logs). */
  readonly identity: readonly string[];
}

/** Reads both files; throws a TlsFileError naming `labels`' flag and the file when one is missing or unusable. */
export function loadSpiffeClientMaterial(
  files: { readonly credentialBundle: string; readonly trustBundle: string },
  labels: { readonly credentialBundle: string; readonly trustBundle: string },
): SpiffeClientMaterial {
  const bundle = readCredentialBundle(files.credentialBundle, labels.credentialBundle);
  const ca = readTrustBundle(files.trustBundle, labels.trustBundle);
  return {
    context: tls.createSecureContext({ cert: bundle.cert, key: bundle.key, ca, minVersion: 'TLSv1.3' }),
    identity: uriSans(bundle.leaf.subjectAltName),
  };
}

/** A server refused: what it presented (its SANs, or `(no certificate)`), and why. */
export type RefusedServer = (presented: string, why: string) => void;

export class SpiffeChannelCredentials extends HandshakeTlsCredentials {
  constructor(
    private readonly material: SpiffeClientMaterial,
    private readonly server: SpiffeMatch,
    private readonly onRefused: RefusedServer = () => undefined,
  ) {
    super();
  }

  protected secureContext(): tls.SecureContext {
    return this.material.context;
  }

  protected serverName(): undefined {
    return undefined;
  }

  protected checkServer(cert: tls.PeerCertificate): Error | undefined {
    const why = refusePeerIdentity(cert.subjectaltname, this.server);
    if (why === undefined) return undefined;
    const presented = presentedIdentity(cert);
    this.onRefused(presented, why);
    return Object.assign(new Error(`server identity refused (${why}); presented ${presented}`), { code: 'ERR_SERVER_IDENTITY' });
  }

  protected override handshakeFailed(err: Error): void {
    const code = (err as { code?: string }).code;
    if (code !== 'ERR_SERVER_IDENTITY') this.onRefused('(handshake failed)', code === undefined ? err.message : `${code}: ${err.message}`);
  }
}
