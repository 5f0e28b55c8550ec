/**
 * The CONNECT listeners: `CONNECT <actor host>:<port>` is answered 200, and the tunnel's bytes become a new
 * HTTP/1.1 connection into the ingress itself — each request inside is routed, cached, re-run and logged exactly
 * like a direct one (by its own Host, as any request). Refused, each with its catalog answer and the connection
 * closed: a target without a port (400 `PROXY_ERR_CONNECT_NO_PORT`), a host that names no actor (404
 * `PROXY_ERR_CONNECT_NOT_ACTOR`), any CONNECT while the proxy drains (503 `PROXY_ERR_DRAINING`), any other
 * method (405 `PROXY_ERR_CONNECT_ONLY`).
 *
 * The CONNECT itself is a request of the one lifecycle (`lifecycle.ts`): counted, timed and logged when its
 * tunnel closes (the access line's `tunnel` field: duration, bytes each way, and who closed it — `client`, or
 * `upstream`: the ingress side, or `drain`). The inner connection then lives as an ingress connection (keep-alive
 * timeout, drain: `Connection: close` and the idle grace).
 *
 * The listeners are the ingress's own (`listeners.ts`): plain TCP (`--connect-listen`), or TLS serving the
 * ingress certificate, rotated from its files, offering HTTP/1.1 only (`--connect-tls-listen`, an HTTPS proxy).
 * A CONNECT head not received within `--headers-timeout-ms` is answered 408, as on the ingress.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { parseActorHost } from '../../lib/actor-ref.js';
import { MAX_HEADER_BYTES } from '../../lib/http-limits.js';
import { ERRORS, type ProxyErrorSpec } from '../http/errors.js';
import { REQUEST_ID_HEADER } from '../http/local-reply.js';
import type { TunnelHub } from '../tunnels/hub.js';
import { ConnectTunnel } from '../tunnels/connect-tunnel.js';
import { Http1Exchange, SocketExchange } from './http1-exchange.js';
import type { Http1Engine } from './http1-engine.js';
import { socketOwner, timeoutCheckInterval } from './http1-engine.js';
import type { ContainedOwner } from '../../lib/containment.js';
import type { RequestLifecycle } from './lifecycle.js';
import { TcpListener, TlsListener, type ConnectionAdmission, type Listener } from './listeners.js';
import type { TlsFiles } from './tls-certificate.js';

export interface ConnectConfig {
  readonly headersTimeoutMs: number;
  readonly actorSuffix: string;
}

export interface ConnectDeps {
  readonly config: ConnectConfig;
  readonly hub: TunnelHub;
  readonly lifecycle: RequestLifecycle;
  /** The ingress's HTTP/1.1 engine, which the tunnelled connections are handed to. */
  readonly ingress: Http1Engine;
  readonly log: Logger;
  /** With these files, the listener speaks TLS (`--connect-tls-listen`). */
  readonly tls?: TlsFiles;
  /** `--max-connections` and overload, shared with the ingress listeners (`connection-gate.ts`). */
  readonly admission?: ConnectionAdmission;
}

const PORT = /:([0-9]{1,5})$/;

/** Why a CONNECT target is refused, or undefined when it is `<actor host>:<port>`. */
export function refuseConnectTarget(target: string, actorSuffix: string): { spec: ProxyErrorSpec; details: string } | undefined {
  const port = PORT.exec(target);
  if (port === null || Number(port[1]) < 1 || Number(port[1]) > 65535) return { spec: ERRORS.CONNECT_NO_PORT, details: `CONNECT target "${target}" has no port` };
  const parsed = parseActorHost(target, actorSuffix);
  if (parsed.kind === 'invalid') return { spec: ERRORS.CONNECT_NOT_ACTOR, details: `CONNECT target: ${parsed.reason}` };
  return undefined;
}

export class ConnectListener {
  /** The HTTP/1.1 engine that reads the CONNECT requests. */
  readonly engine: http.Server<typeof IncomingMessage, typeof Http1Exchange>;
  readonly listener: Listener;
  #closed: Promise<void> | undefined;

  /** Throws `TlsCertificateError` when the TLS variant's certificate files are missing or unusable. */
  constructor(private readonly deps: ConnectDeps) {
    const { config } = deps;
    const onOther = (req: IncomingMessage, res: ServerResponse): void =>
      deps.lifecycle.guard.run('connect', deps.lifecycle.ownerOf(res as Http1Exchange), () => this.#onOtherMethod(req, res as Http1Exchange));
    this.engine = http.createServer(
      {
        maxHeaderSize: MAX_HEADER_BYTES,
        headersTimeout: config.headersTimeoutMs,
        requestTimeout: 0,
        connectionsCheckingInterval: timeoutCheckInterval(config.headersTimeoutMs),
        requireHostHeader: false,
        noDelay: true,
        ServerResponse: Http1Exchange,
      },
      onOther,
    );
    // A request with an expectation is refused as any other: no 100 Continue inviting a body that is never read.
    this.engine.on('checkContinue', onOther);
    this.engine.on('checkExpectation', onOther);
    this.engine.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.#contained(req, socket as Socket, head));
    // node starts its head timeout checks when an HTTP server starts listening.
    this.engine.emit('listening');
    const sink = (socket: Socket): void => {
      deps.lifecycle.guard.run('connection', socketOwner(socket), () => this.engine.emit('connection', socket));
    };
    this.listener =
      deps.tls === undefined
        ? new TcpListener(sink, deps.admission)
        : new TlsListener(deps.tls, sink, deps.log, { handshakeTimeoutMs: config.headersTimeoutMs, alpn: 'http1', admission: deps.admission });
  }

  get server(): Listener['server'] {
    return this.listener.server;
  }

  /** Any method but CONNECT: 405, and the connection closes after it. */
  #onOtherMethod(req: IncomingMessage, exchange: Http1Exchange): void {
    const { lifecycle } = this.deps;
    const ctx = lifecycle.begin(exchange, { site: 'connect', url: req.url ?? '', method: req.method ?? 'GET', rawHeaders: req.rawHeaders, connectTarget: req.url ?? '' });
    exchange.closeAfterResponse();
    lifecycle.answer(ctx, ERRORS.CONNECT_ONLY, `${req.method ?? ''} on the CONNECT listener`, { allow: 'CONNECT' });
  }

  /** A CONNECT, inside the containment boundary (before its exchange exists, its owner is the socket). */
  #contained(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const { lifecycle } = this.deps;
    let exchange: SocketExchange | undefined;
    const owner = (): ContainedOwner => (exchange === undefined ? socketOwner(socket) : lifecycle.ownerOf(exchange)());
    lifecycle.guard.run('connect', owner, () => {
      exchange = new SocketExchange(req, socket, 'connect');
      this.#onConnect(req, socket, head, exchange);
    });
  }

  #onConnect(req: IncomingMessage, socket: Socket, head: Buffer, exchange: SocketExchange): void {
    const { hub, lifecycle, config } = this.deps;
    const target = req.url ?? '';
    const ctx = lifecycle.begin(exchange, { site: 'connect', url: target, method: 'CONNECT', rawHeaders: req.rawHeaders, hasBody: false, connectTarget: target });
    if (ctx.error !== undefined) return lifecycle.start(ctx); // refused as it began (overloaded: shed-all)
    const refusal = hub.draining ? { spec: ERRORS.DRAINING, details: 'CONNECT while draining' } : refuseConnectTarget(target, config.actorSuffix);
    if (refusal !== undefined) {
      hub.refused('connect');
      lifecycle.refuse(ctx, refusal.spec, refusal.details);
      return lifecycle.start(ctx);
    }
    const tunnelled = exchange.openTunnel(200, [REQUEST_ID_HEADER, ctx.requestId]);
    if (tunnelled === undefined) return lifecycle.answered(ctx); // the client is already gone
    ctx.tunnel = new ConnectTunnel(socket, head, hub);
    lifecycle.answered(ctx);
    if (head.length > 0) socket.unshift(head);
    this.deps.ingress.accept(socket, true);
  }

  listen(host: string, port: number): Promise<void> {
    return this.listener.listen(host, port);
  }

  /** Stops accepting (open tunnels are untouched: they drain as ingress connections). */
  stopAccepting(): Promise<void> {
    return (this.#closed ??= this.listener.close());
  }
}
