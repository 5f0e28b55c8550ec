/**
 * gRPC channel credentials for a client that authenticates with a certificate: TLS 1.3 only, the server checked
 * against a CA file and a configured server name, and the client's credential bundle (and the CA file) read again
 * on every handshake, so a rotated certificate is used from the next connection on without a restart. A read that
 * fails keeps the last good credentials and reports the error.
 */
import tls from 'node:tls';
import type { Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { readCredentialBundle, readTrustBundle } from './files.js';

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

type ConnectorArgs = Parameters<grpc.ChannelCredentials['_createSecureConnector']>;

export class ReloadingTlsCredentials extends grpc.ChannelCredentials {
  #last: tls.SecureContextOptions;
  #handshakes = 0;

  /** Reads the files once now: throws a TlsFileError naming the file when one is missing or unusable. */
  constructor(
    private readonly files: ClientTlsFiles,
    private readonly onError: (err: Error) => void = () => undefined,
    private readonly labels: ClientTlsLabels = { caFile: 'CA file', credentialBundle: 'client credential bundle' },
  ) {
    super();
    this.#last = this.#read();
  }

  /** Handshakes made so far (each read the files). */
  get handshakes(): number {
    return this.#handshakes;
  }

  #read(): tls.SecureContextOptions {
    const bundle = readCredentialBundle(this.files.credentialBundle, this.labels.credentialBundle);
    const ca = readTrustBundle(this.files.caFile, this.labels.caFile);
    return { cert: bundle.cert, key: bundle.key, ca, minVersion: 'TLSv1.3' };
  }

  #fresh(): tls.SecureContextOptions {
    try {
      this.#last = this.#read();
    } catch (err) {
      this.onError(err as Error);
    }
    return this.#last;
  }

  _isSecure(): boolean {
    return true;
  }

  _equals(other: grpc.ChannelCredentials): boolean {
    return other === this;
  }

  _createSecureConnector(..._args: ConnectorArgs): grpc.experimental.SecureConnector {
    const callCredentials = _args[2] ?? grpc.credentials.createEmpty();
    return {
      connect: (socket: Socket) => this.#handshake(socket),
      waitForReady: () => Promise.resolve(),
      getCallCredentials: () => callCredentials,
      destroy: () => undefined,
    };
  }

  #handshake(socket: Socket): Promise<grpc.experimental.SecureConnectResult> {
    this.#handshakes++;
    const serverName = this.files.serverName;
    return new Promise((resolve, reject) => {
      const secured = tls.connect({
        socket,
        secureContext: tls.createSecureContext(this.#fresh()),
        minVersion: 'TLSv1.3',
        ALPNProtocols: ['h2'],
        servername: serverName,
        checkServerIdentity: (_host, cert) => tls.checkServerIdentity(serverName, cert),
      });
      const fail = (err: Error): void => reject(err);
      secured.once('error', fail);
      secured.once('secureConnect', () => {
        secured.removeListener('error', fail);
        resolve({ socket: secured, secure: true });
      });
    });
  }
}
