/**
 * The ingress: the listeners (`listeners.ts`: plaintext HTTP/1.1 + h2c on one port, and HTTPS with ALPN), the two
 * protocol engines they hand connections to (`http1-engine.ts`, `h2-engine.ts`), and the drain. Every request the
 * engines see runs through the one request lifecycle (`lifecycle.ts`).
 *
 * Drain (SIGTERM): the listeners close at once; every HTTP/2 connection gets GOAWAY (its open streams finish);
 * every response not yet started, and every request that still arrives, is answered with `Connection: close`; a
 * connection that is idle is closed once it has stayed idle for `--drain-idle-grace-ms`. The drain is over when no
 * request is left and every connection is closed, or after `--drain-timeout-ms`.
 */
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { WireProtocol } from '../../lib/preface-sniff.js';
import type { TunnelHub } from '../tunnels/hub.js';
import { Http1Engine, socketOwner, type Http1EngineConfig } from './http1-engine.js';
import { H2Engine, type H2EngineConfig } from './h2-engine.js';
import type { RequestLifecycle } from './lifecycle.js';
import { PlainListener, TlsListener, type ConnectionAdmission, type Listener } from './listeners.js';
import type { TlsFiles } from './tls-certificate.js';

export type IngressConfig = Http1EngineConfig & H2EngineConfig;

export class Ingress {
  readonly http1: Http1Engine;
  readonly h2: H2Engine;
  readonly #plain: PlainListener;
  #tls: TlsListener | undefined;
  #draining = false;
  #onDrained: (() => void) | undefined;
  #listenerClosed: Promise<void> | undefined;

  constructor(
    private readonly config: IngressConfig,
    readonly lifecycle: RequestLifecycle,
    hub: TunnelHub | undefined,
    private readonly log: Logger,
    /** `--max-connections` and overload, over every client listener (`connection-gate.ts`). */
    private readonly admission?: ConnectionAdmission,
  ) {
    this.http1 = new Http1Engine({ config, lifecycle, hub });
    this.h2 = new H2Engine({ config, lifecycle, hub });
    this.#plain = new PlainListener(this.#accept, config.headersTimeoutMs, admission);
    const settled = (): void => {
      if (this.#draining && this.#isDrained()) this.#onDrained?.();
    };
    lifecycle.onSettled = settled;
    this.http1.onSettled = settled;
    this.h2.onSettled = settled;
  }

  /** A listener accepted a connection: the engine for its protocol takes it. */
  readonly #accept = (socket: Socket, protocol: WireProtocol): void => {
    this.lifecycle.guard.run('connection', socketOwner(socket), () => {
      if (protocol === 'h2') this.h2.accept(socket);
      else this.http1.accept(socket);
    });
  };

  get inflight(): number {
    return this.lifecycle.inflight;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** The plaintext listener (HTTP/1.1 and h2c). */
  get listener(): Listener {
    return this.#plain;
  }

  /** The HTTPS listener, when one was opened. */
  get tlsListener(): TlsListener | undefined {
    return this.#tls;
  }

  listen(host: string, port: number): Promise<void> {
    return this.#plain.listen(host, port);
  }

  /** Opens the HTTPS listener; throws `TlsCertificateError` when the certificate files are missing or unusable. */
  listenTls(host: string, port: number, files: TlsFiles): Promise<void> {
    this.#tls = new TlsListener(files, this.#accept, this.log, { handshakeTimeoutMs: this.config.headersTimeoutMs, alpn: 'h2-or-http1', admission: this.admission });
    return this.#tls.listen(host, port);
  }

  /**
   * Stops accepting connections, lets every open connection finish (see the header), and waits up to `timeoutMs`.
   * Resolves true when every request finished and every connection closed; on timeout the remaining connections
   * are closed and it resolves false.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    const closed = this.stopAccepting();
    this.#draining = true;
    this.lifecycle.draining = true;
    this.http1.drain();
    this.h2.drain();
    let finished = this.#isDrained();
    if (!finished) {
      finished = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        this.#onDrained = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
    }
    this.http1.closeAll();
    this.h2.closeAll();
    this.#plain.destroyUndecided();
    await closed;
    return finished;
  }

  /**
   * Closes the listeners (once); open connections are served as before. Resolves when the listeners have closed,
   * which is once every connection is closed too.
   */
  stopAccepting(): Promise<void> {
    // The engines are not closed: http.Server#close would destroy idle keep-alive connections at once, resetting
    // a request a client is writing on one at that moment.
    return (this.#listenerClosed ??= Promise.all([this.#plain.close(), this.#tls?.close()]).then(() => undefined));
  }

  #isDrained(): boolean {
    return this.lifecycle.inflight === 0 && this.http1.connections === 0 && this.h2.sessions === 0;
  }
}
