/**
 * The ingress listeners. Both hand every accepted connection to one of the ingress's two protocol engines — the
 * HTTP/1.1 server or the HTTP/2 server — so a request runs the same way whichever listener it came in on:
 *
 * - the plaintext listener (`--listen`) serves HTTP/1.1 and HTTP/2 with prior knowledge (h2c) on one port, told
 *   apart by the connection preface (`lib/preface-sniff.ts`);
 * - the HTTPS listener (`--tls-listen`, `--tls-cert`, `--tls-key`) negotiates ALPN `h2` or `http/1.1`, TLS 1.2 at
 *   least. A client without ALPN gets HTTP/1.1. A client offering only protocols the proxy does not know is
 *   served HTTP/1.1 too (node can decline ALPN only with a fatal alert, so the client's first offer is
 *   acknowledged). The certificate is rotated from its files without a restart (`certificate-watch.ts`). A
 *   handshake not complete within the head timeout closes the connection.
 * - the CONNECT listeners use the same code: plain TCP (`TcpListener`), or the same TLS listener offering only
 *   HTTP/1.1.
 * - the egress listener (`proxy/egress/`) is the same TLS listener, asking every client for its certificate.
 *
 * Each takes the same `ConnectionAdmission` (`connection-gate.ts`: `--max-connections` over every client listener
 * together, and overload), asked as a connection is accepted: a refused one is closed at once, before a byte of it
 * is read or a TLS handshake begins.
 */
import net, { type Socket } from 'node:net';
import tls, { type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { sniffProtocol, type WireProtocol } from '../../lib/preface-sniff.js';
import { CertificateWatch } from './certificate-watch.js';
import { loadCertificate, TLS_MIN_VERSION, type TlsFiles } from './tls-certificate.js';

/** Receives a connection and the protocol it speaks. */
export type ConnectionSink = (socket: Socket, protocol: WireProtocol) => void;

/** Admits or refuses each accepted client connection (undefined: every one admitted). */
export interface ConnectionAdmission {
  admit(socket: Socket): boolean;
}

/** Closes each connection `admission` refuses as the server accepts it, before any other listener sees it. */
function admitOnAccept(server: net.Server, admission: ConnectionAdmission | undefined): void {
  if (admission === undefined) return;
  server.prependListener('connection', (socket: Socket) => {
    if (!admission.admit(socket)) socket.destroy();
  });
}

export interface Listener {
  readonly server: net.Server;
  listen(host: string, port: number): Promise<void>;
  /** Closes the listening socket (open connections are not touched); resolves once the server has closed. */
  close(): Promise<void>;
}

function listenOn(server: net.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** HTTP/1.1 and h2c on one plaintext port. `sniffTimeoutMs`: a connection must send its first bytes within this. */
export class PlainListener implements Listener {
  readonly server: net.Server;
  #closed: Promise<void> | undefined;
  /** Connections whose first bytes have not arrived yet. */
  readonly #undecided = new Set<Socket>();

  constructor(sink: ConnectionSink, sniffTimeoutMs: number, admission?: ConnectionAdmission) {
    // Half-open as node's own HTTP server: a client's FIN is the HTTP engine's to handle (and a tunnel's to pass on).
    this.server = net.createServer({ noDelay: true, allowHalfOpen: true }, (socket) => {
      if (socket.destroyed) return; // refused
      this.#undecided.add(socket);
      socket.once('close', () => this.#undecided.delete(socket));
      sniffProtocol(socket, sniffTimeoutMs, (protocol) => {
        this.#undecided.delete(socket);
        sink(socket, protocol);
      });
    });
    admitOnAccept(this.server, admission);
  }

  /** Closes the connections that have not sent a byte yet (the end of a drain). */
  destroyUndecided(): void {
    for (const socket of this.#undecided) socket.destroy();
  }

  listen(host: string, port: number): Promise<void> {
    return listenOn(this.server, host, port);
  }

  close(): Promise<void> {
    return (this.#closed ??= closeServer(this.server));
  }
}

const H2 = 'h2';
const HTTP1 = 'http/1.1';

/**
 * Picks `h2`, else `http/1.1`, else (no protocol the proxy knows) the client's first offer, served as HTTP/1.1.
 * Called by node inside the TLS handshake, outside any request: it must not throw (undefined declines ALPN, which
 * ends that handshake alone).
 */
export function selectProtocol({ protocols }: { protocols?: unknown }): string | undefined {
  if (!Array.isArray(protocols)) return undefined;
  if (protocols.includes(H2)) return H2;
  if (protocols.includes(HTTP1)) return HTTP1;
  const first: unknown = protocols[0];
  return typeof first === 'string' ? first : undefined;
}

export interface TlsListenerOptions {
  /** A connection must complete its handshake within this time, or it is closed. */
  readonly handshakeTimeoutMs: number;
  /** `h2-or-http1`: ALPN offers both (the HTTPS ingress); `http1`: HTTP/1.1 only (the TLS CONNECT listener). */
  readonly alpn: 'h2-or-http1' | 'http1';
  readonly admission?: ConnectionAdmission | undefined;
  /**
   * Ask every client for a certificate chaining to `ca` (PEM), without refusing the handshake when it does not: the
   * connection's sink reads `authorized` and the peer certificate and answers on its own terms (the egress listener).
   */
  readonly clientCa?: Buffer | undefined;
}

/** TLS with ALPN; the serving certificate is reloaded from its files when they change. */
export class TlsListener implements Listener {
  readonly server: tls.Server;
  readonly certificate: CertificateWatch;
  #closed: Promise<void> | undefined;

  /** Throws `TlsCertificateError` when the files are missing or unusable. */
  constructor(files: TlsFiles, sink: ConnectionSink, log: Logger, opts: TlsListenerOptions) {
    const initial = loadCertificate(files);
    const alpn = opts.alpn === 'h2-or-http1' ? { ALPNCallback: selectProtocol } : { ALPNProtocols: [HTTP1] };
    const ca = opts.clientCa;
    const clientAuth = ca === undefined ? {} : { ca, requestCert: true, rejectUnauthorized: false };
    this.server = tls.createServer(
      { cert: initial.cert, key: initial.key, minVersion: TLS_MIN_VERSION, ...alpn, ...clientAuth, noDelay: true, allowHalfOpen: true, handshakeTimeout: opts.handshakeTimeoutMs },
      (socket: TLSSocket) => {
        socket.allowHalfOpen = true; // from the handshake on, a client's FIN is the engine's (and a tunnel's) to handle
        sink(socket, socket.alpnProtocol === H2 ? 'h2' : 'http/1.1');
      },
    );
    // A failed or timed-out handshake concerns one client only: its connection is closed, nothing else.
    this.server.on('tlsClientError', (_err: Error, socket: TLSSocket) => socket.destroy());
    // Not half-open during the handshake: a client that ends its side before it (a TCP health check) fails the
    // handshake at once rather than holding its socket, and its place under --max-connections, until the timeout.
    this.server.prependListener('connection', (raw: Socket) => {
      raw.allowHalfOpen = false;
    });
    admitOnAccept(this.server, opts.admission);
    this.certificate = new CertificateWatch(files, initial, (loaded) => this.server.setSecureContext({ cert: loaded.cert, key: loaded.key, minVersion: TLS_MIN_VERSION, ...(ca === undefined ? {} : { ca }) }), log);
  }

  listen(host: string, port: number): Promise<void> {
    return listenOn(this.server, host, port);
  }

  close(): Promise<void> {
    this.certificate.close();
    return (this.#closed ??= closeServer(this.server));
  }
}

/** Plain TCP without protocol sniffing: every connection is HTTP/1.1 (the plaintext CONNECT listener). */
export class TcpListener implements Listener {
  readonly server: net.Server;
  #closed: Promise<void> | undefined;

  constructor(sink: ConnectionSink, admission?: ConnectionAdmission) {
    this.server = net.createServer({ noDelay: true, allowHalfOpen: true }, (socket) => {
      if (!socket.destroyed) sink(socket, 'http/1.1');
    });
    admitOnAccept(this.server, admission);
  }

  listen(host: string, port: number): Promise<void> {
    return listenOn(this.server, host, port);
  }

  close(): Promise<void> {
    return (this.#closed ??= closeServer(this.server));
  }
}
