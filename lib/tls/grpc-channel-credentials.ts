/**
 * gRPC channel credentials that make their own TLS handshake (grpc-js's secure connector): TLS 1.3 only, ALPN
 * `h2`, the client's certificate from a secure context obtained per handshake, and a server check of the caller's
 * choosing after the chain verified against the CA — a server name (`grpc-client-credentials.ts`, the control
 * plane) or a SPIFFE identity (`spiffe-channel-credentials.ts`, extproc). A refused server fails the connection;
 * grpc-js then reports the call UNAVAILABLE and retries the connection with back-off.
 */
import tls from 'node:tls';
import type { Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';

type ConnectorArgs = Parameters<grpc.ChannelCredentials['_createSecureConnector']>;

export abstract class HandshakeTlsCredentials extends grpc.ChannelCredentials {
  #handshakes = 0;

  /** Handshakes started so far. */
  get handshakes(): number {
    return this.#handshakes;
  }

  /** The client side of the next handshake: its certificate, key and the CAs it trusts. */
  protected abstract secureContext(): tls.SecureContext;
  /** The SNI sent, if any. */
  protected abstract serverName(): string | undefined;
  /** Called once the server's chain verified: an Error refuses the server. */
  protected abstract checkServer(cert: tls.PeerCertificate): Error | undefined;
  /** Called when a handshake fails (the server refused, its chain did not verify, the connection broke). */
  protected handshakeFailed(_err: Error): void {}

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
    const servername = this.serverName();
    return new Promise((resolve, reject) => {
      const secured = tls.connect({
        socket,
        secureContext: this.secureContext(),
        minVersion: 'TLSv1.3',
        ALPNProtocols: ['h2'],
        ...(servername === undefined ? {} : { servername }),
        checkServerIdentity: (_host, cert) => this.checkServer(cert),
      });
      const fail = (err: Error): void => {
        this.handshakeFailed(err);
        reject(err);
      };
      secured.once('error', fail);
      secured.once('secureConnect', () => {
        secured.removeListener('error', fail);
        resolve({ socket: secured, secure: true });
      });
    });
  }
}
