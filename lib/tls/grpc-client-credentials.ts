/**
 * gRPC channel credentials for a client that authenticates with a certificate to a server checked by name (the
 * control plane): TLS 1.3 only, the server checked against a CA file and a configured server name, and the
 * client's credential bundle (and the CA file) read again on every handshake, so a rotated certificate is used from
 * the next connection on without a restart. A read that fails keeps the last good credentials and reports the error.
 */
import tls from 'node:tls';
import { readCredentialBundle, readTrustBundle } from './files.js';
import { HandshakeTlsCredentials } from './grpc-channel-credentials.js';

export interface ClientTlsFiles {
  /** CA certificates that sign the server's certificate. */
  readonly caFile: string;
  /** The client's certificate chain and private key in one PEM file. */
  readonly credentialBundle: string;
  /** The name the server's certificate must carry (DNS or IP SAN); also sent as SNI. */
  readonly serverName: string;
}

/** How errors name the two files (e.g. by their flags). */
export interface ClientTlsLabels {
  readonly caFile: string;
  readonly credentialBundle: string;
}

export class ReloadingTlsCredentials extends HandshakeTlsCredentials {
  #last: tls.SecureContextOptions;

  /** Reads the files once now: throws a TlsFileError naming the file when one is missing or unusable. */
  constructor(
    private readonly files: ClientTlsFiles,
    private readonly onError: (err: Error) => void = () => undefined,
    private readonly labels: ClientTlsLabels = { caFile: 'CA file', credentialBundle: 'client credential bundle' },
  ) {
    super();
    this.#last = this.#read();
  }

  #read(): tls.SecureContextOptions {
    const bundle = readCredentialBundle(this.files.credentialBundle, this.labels.credentialBundle);
    const ca = readTrustBundle(this.files.caFile, this.labels.caFile);
    return { cert: bundle.cert, key: bundle.key, ca, minVersion: 'TLSv1.3' };
  }

  protected secureContext(): tls.SecureContext {
    try {
      this.#last = this.#read();
    } catch (err) {
      this.onError(err as Error);
    }
    return tls.createSecureContext(this.#last);
  }

  protected serverName(): string {
    return this.files.serverName;
  }

  protected checkServer(cert: tls.PeerCertificate): Error | undefined {
    return tls.checkServerIdentity(this.files.serverName, cert);
  }
}
