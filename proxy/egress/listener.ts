/**
 * The egress listener (`--egress-listen`): where actors' outbound connections arrive, as the platform's tunnel agent
 * opens them. TLS 1.2 at least with the serving certificate of `--egress-tls-cert` / `--egress-tls-key` (reloaded
 * when the files change), asking every client for a certificate from the actor identity CA (`--egress-client-ca`)
 * without failing the handshake over it: the certificate is checked once per connection (`checkActorCertificate`)
 * and the result serves every CONNECT on it, so a bad certificate gets a clear 403 `invalid actor certificate`
 * rather than a handshake alert. ALPN `h2` or `http/1.1`:
 * - HTTP/1.1: one `CONNECT IP:port` per connection (node's `connect` event); any other method 405;
 * - HTTP/2: each classic CONNECT stream is one tunnel, as many at once as `--h2-max-concurrent-streams`; any other
 *   method 405 on its stream. A connection with no stream open for `--keep-alive-timeout-ms` is closed, and one
 *   that does not answer a PING within it (`edge/session-clock.ts`).
 * What a CONNECT is answered, and its tunnel, is `connect-handler.ts`; the grants that re-validate the open tunnels
 * and close them when their verdict ends, `grants.ts` (told by `signals`). Connections are admitted by the proxy's
 * `--max-connections` gate as the ingress's are; a TLS handshake or a CONNECT head not complete within
 * `--headers-timeout-ms` closes the connection.
 *
 * The drain: the listening socket closes, every HTTP/2 connection gets GOAWAY, a CONNECT still arriving on an open
 * connection is answered 503; open tunnels flow until the drain timeout, then everything left is closed.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2, { type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { WireProtocol } from '../../lib/preface-sniff.js';
import { MAX_HEADER_BYTES } from '../../lib/http-limits.js';
import type { ContainedOwner } from '../../lib/containment.js';
import type { AccessLog } from '../ops/access-log.js';
import type { ProxyContainment } from '../ops/containment.js';
import { timeoutCheckInterval } from '../edge/http1-engine.js';
import { TlsListener, type ConnectionAdmission } from '../edge/listeners.js';
import { SessionClock } from '../edge/session-clock.js';
import type { ExtProcClient } from '../stages/ext-proc/client.js';
import { checkActorCertificate, presentedCertificateOf } from '../../lib/egress/actor-certificate.js';
import { loadClientCa, type EgressListenerConfig } from './config.js';
import { EgressConnectHandler } from './connect-handler.js';
import { ForbiddenDestinations } from './forbidden-destinations.js';
import type { EgressDecider } from './egress-decider.js';
import { EgressStats } from './egress-stats.js';
import type { EgressConnection } from './egress-request.js';
import { askExtProcEgress } from './extproc-egress.js';
import type { GrantSignals } from './grant-signals.js';
import { EgressGrants } from './grants.js';
import { H1ConnectRequest, H1OtherRequest } from './h1-egress-request.js';
import { H2StreamRequest } from './h2-egress-request.js';
import { EgressTunnels } from './tunnels.js';

/** The ingress settings the egress listener's protocol engines share. */
export interface EgressEngineSettings {
  readonly headersTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly h2MaxConcurrentStreams: number;
}

export interface EgressListenerDeps {
  readonly config: EgressListenerConfig;
  readonly engine: EgressEngineSettings;
  readonly decider: EgressDecider;
  /** The proxy's ext_proc client: one stream per CONNECT the decider sends to the slow path. */
  readonly extProc: ExtProcClient;
  readonly guard: ProxyContainment;
  readonly log: Logger;
  readonly accessLog?: AccessLog | undefined;
  readonly admission?: ConnectionAdmission | undefined;
  /** What the grants hear about fresher verdicts and revocations (`egress-cache-stage.ts`); none: their own re-validations only. */
  readonly signals?: GrantSignals | undefined;
  /** Wall clock for certificate validity and the grants' leases (default `Date.now`). */
  readonly now?: () => number;
}

/** A connection whose certificate could not be looked up (never expected): refused as having none. */
const UNKNOWN_CONNECTION: EgressConnection = Object.freeze({
  check: Object.freeze({ kind: 'refused', reason: 'no-certificate', detail: 'connection not known' }),
  certificatePem: undefined,
  remoteAddress: '',
});

/** Where a session's clock is kept. */
const CLOCK = Symbol('actor-edge.egress-clock');

const socketOwner = (socket: Duplex): ContainedOwner => ({ fail: () => socket.destroy() });

export class EgressListener {
  readonly tunnels: EgressTunnels;
  readonly grants: EgressGrants;
  readonly stats: EgressStats;
  readonly listener: TlsListener;
  readonly #deps: EgressListenerDeps;
  readonly #handler: EgressConnectHandler;
  readonly #h1: http.Server;
  readonly #h2: http2.Http2Server;
  /** Never dialled, whatever a policy allows: `--egress-never-dial`, and (once bound) the proxy's own listeners. */
  readonly forbidden: ForbiddenDestinations;
  readonly #connections = new WeakMap<object, EgressConnection>();
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<ServerHttp2Session>();
  /** The connection `#onConnection` is handing to the HTTP/2 engine (its session is made while it does). */
  #accepting: { readonly connection: EgressConnection; readonly socket: Socket } | undefined;
  #closed: Promise<void> | undefined;
  readonly #detachGrants: () => void;

  /** Throws a UsageError when the certificate files or the client CA are missing or unusable. */
  constructor(deps: EgressListenerDeps) {
    this.#deps = deps;
    const { config, engine, guard } = deps;
    const now = deps.now ?? Date.now;
    this.tunnels = new EgressTunnels(config.maxTunnelsPerActor);
    this.forbidden = new ForbiddenDestinations(config.neverDial);
    const ask = (q: { readonly destination: string; readonly certificatePem: string }, signal: AbortSignal) => askExtProcEgress(deps.extProc, q, { timeoutMs: config.extprocTimeoutMs, signal });
    this.grants = new EgressGrants({
      decider: deps.decider,
      ask,
      now,
      contained: (fail, fn) => guard.wrap('egress-tunnel', { fail }, fn),
      log: deps.log,
    });
    this.#detachGrants = deps.signals?.attach(this.grants) ?? (() => undefined);
    this.stats = new EgressStats(this.tunnels, () => this.#sockets.size, this.grants);
    this.#handler = new EgressConnectHandler({
      limits: { idleTimeoutMs: config.tunnelIdleTimeoutMs, maxLifetimeMs: config.tunnelMaxLifetimeMs, connectTimeoutMs: config.connectTimeoutMs },
      hostnameLimits: { timeoutMs: config.sniTimeoutMs, maxBytes: config.sniMaxBytes },
      decider: deps.decider,
      slowPath: ask,
      tunnels: this.tunnels,
      grants: this.grants,
      stats: this.stats,
      guard,
      log: deps.log,
      accessLog: deps.accessLog,
      now,
      forbidden: this.forbidden,
    });

    const onOther = (req: IncomingMessage, res: ServerResponse): void =>
      guard.run('egress-connect', socketOwner(req.socket), () => this.#handler.handle(new H1OtherRequest(req, res, this.#connectionOf(req.socket))));
    this.#h1 = http.createServer(
      {
        maxHeaderSize: MAX_HEADER_BYTES,
        headersTimeout: engine.headersTimeoutMs,
        requestTimeout: 0,
        connectionsCheckingInterval: timeoutCheckInterval(engine.headersTimeoutMs),
        requireHostHeader: false,
        noDelay: true,
      },
      onOther,
    );
    // A request with an expectation is refused as any other: no 100 Continue inviting a body that is never read
    // (node's default), no 417 of node's own.
    this.#h1.on('checkContinue', onOther);
    this.#h1.on('checkExpectation', onOther);
    this.#h1.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      guard.run('egress-connect', socketOwner(socket), () => this.#handler.handle(new H1ConnectRequest(req, socket as Socket, head, this.#connectionOf(socket)))),
    );
    // node starts its head timeout checks when an HTTP server starts listening.
    this.#h1.emit('listening');

    this.#h2 = http2.createServer({ settings: { maxConcurrentStreams: engine.h2MaxConcurrentStreams, maxHeaderListSize: MAX_HEADER_BYTES } });
    this.#h2.on('session', (session: ServerHttp2Session) => guard.run('connection', { fail: () => session.destroy() }, () => this.#onSession(session)));
    this.#h2.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => guard.run('egress-connect', socketOwner(stream), () => this.#onStream(stream, headers)));

    const sink = (socket: Socket, protocol: WireProtocol): void => guard.run('connection', socketOwner(socket), () => this.#onConnection(socket as TLSSocket, protocol, now()));
    this.listener = new TlsListener(config.tls, sink, deps.log, {
      handshakeTimeoutMs: engine.headersTimeoutMs,
      alpn: 'h2-or-http1',
      admission: deps.admission,
      clientCa: loadClientCa(config.clientCaFile),
    });
  }

  get server(): TlsListener['server'] {
    return this.listener.server;
  }

  listen(host: string, port: number): Promise<void> {
    return this.listener.listen(host, port);
  }

  #connectionOf(socket: object): EgressConnection {
    return this.#connections.get(socket) ?? UNKNOWN_CONNECTION;
  }

  /** A connection after its handshake: its certificate checked once, then handed to the engine ALPN chose. */
  #onConnection(socket: TLSSocket, protocol: WireProtocol, nowMs: number): void {
    const presented = presentedCertificateOf(socket);
    const connection: EgressConnection = {
      check: checkActorCertificate(presented, nowMs),
      certificatePem: presented.leaf?.toString(),
      remoteAddress: socket.remoteAddress ?? '',
    };
    this.#connections.set(socket, connection);
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    socket.on('error', () => undefined); // a broken connection ends what it carries ('close' follows)
    if (protocol === 'h2') {
      this.#accepting = { connection, socket };
      try {
        this.#h2.emit('connection', socket);
      } finally {
        this.#accepting = undefined;
      }
    } else {
      this.#h1.emit('connection', socket);
    }
  }

  #onSession(session: ServerHttp2Session): void {
    const accepting = this.#accepting;
    this.#connections.set(session, accepting?.connection ?? UNKNOWN_CONNECTION);
    this.#sessions.add(session);
    session.once('close', () => this.#sessions.delete(session));
    session.on('error', () => undefined); // a broken connection ends its streams ('close' follows)
    const clock = new SessionClock(session, this.#deps.engine.keepAliveTimeoutMs, this.#deps.engine.headersTimeoutMs);
    (session as ServerHttp2Session & { [CLOCK]?: SessionClock })[CLOCK] = clock;
    session.once('close', () => clock.stop());
    // A session destroyed while a stream is still open may leave its connection open (and never emit 'close'):
    // whoever destroys it (the client's FIN below, the session clock, the drain), the connection goes with it.
    const socket = accepting?.socket;
    if (socket !== undefined) {
      const destroy = session.destroy.bind(session);
      session.destroy = (...args: Parameters<ServerHttp2Session['destroy']>) => {
        destroy(...args);
        socket.destroy();
      };
      // HTTP/2 has no half-closed connection: the client's FIN ends it and every tunnel on it.
      socket.once('end', () => session.destroy());
    }
    if (this.tunnels.draining) session.close();
  }

  #onStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    const session = stream.session as (ServerHttp2Session & { [CLOCK]?: SessionClock }) | undefined;
    const clock = session?.[CLOCK];
    if (clock !== undefined) {
      clock.streamOpened();
      stream.once('close', () => clock.streamClosed());
    }
    this.#handler.handle(new H2StreamRequest(stream, headers, session === undefined ? UNKNOWN_CONNECTION : this.#connectionOf(session)));
  }

  /** Stops accepting: the listening socket closes, HTTP/2 connections get GOAWAY, new CONNECTs are refused 503. */
  stopAccepting(): Promise<void> {
    this.tunnels.stopAdmitting();
    for (const session of this.#sessions) session.close();
    return (this.#closed ??= this.listener.close());
  }

  /**
   * The drain: stops accepting, lets open tunnels flow for up to `timeoutMs`, then closes whatever is left. Resolves
   * true when every tunnel closed on its own.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    void this.stopAccepting();
    const clean = await this.tunnels.drain(timeoutMs);
    this.closeAll();
    return clean;
  }

  /** Closes every tunnel and connection now (the grants stop: nothing is re-validated any more). */
  closeAll(): void {
    void this.stopAccepting();
    this.#detachGrants();
    this.grants.close();
    this.tunnels.closeAll();
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#sockets) socket.destroy();
    this.#h1.close(() => undefined);
  }
}
