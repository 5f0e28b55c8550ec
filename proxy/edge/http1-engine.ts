/**
 * The HTTP/1.1 protocol engine: a node:http server (listening on no socket itself: the listeners hand it
 * connections) whose every response is an `Http1Exchange`. It decides only when each request has its turn — the
 * request lifecycle (`lifecycle.ts`) does the rest:
 *
 * - each connection serves its requests one at a time (`client-connection.ts`): a pipelined request starts when
 *   the response before it is complete; when the connection closes, every request still on it ends there;
 * - an upgrade request (`Connection: upgrade` + `Upgrade`) is handed over with its socket and becomes a
 *   `SocketExchange`: a WebSocket handshake (or a token `--upgrade-allow` names) runs the chain and may become a
 *   tunnel; `h2c` is served as plain HTTP/1.1; any other token, or an upgrade while draining, is refused
 *   (`upgrade-request.ts`);
 * - a CONNECT on the ingress itself has an authority-form target, refused as any such target.
 *
 * Limits are node's own: request head over 60 KiB → 431, head not received within `--headers-timeout-ms` → 408,
 * the whole request within `--request-timeout-ms` → 408, idle keep-alive connections closed after
 * `--keep-alive-timeout-ms`; what node's parser cannot read is answered once (`parse-errors.ts`).
 */
import http, { type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { MAX_HEADER_BYTES } from '../../lib/http-limits.js';
import { ERRORS } from '../http/errors.js';
import type { DownstreamExchange } from '../http/exchange.js';
import type { ProxyRequest } from '../request/context.js';
import { ClientConnection } from './client-connection.js';
import { Http1Exchange, SocketExchange } from './http1-exchange.js';
import type { EngineDeps } from './lifecycle.js';
import { ProtocolEngine } from './protocol-engine.js';
import { decideUpgrade } from './upgrade-request.js';
import { onParseError } from './parse-errors.js';
import type { ContainedOwner } from '../../lib/containment.js';

export interface Http1EngineConfig {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** `--drain-idle-grace-ms`. */
  readonly drainIdleGraceMs: number;
  /** Upgrade tokens forwarded (`websocket` and `--upgrade-allow`). */
  readonly upgradeTokens: ReadonlySet<string>;
}

/** A connection whose own handling threw is closed (the requests on it end as their client left). */
export function socketOwner(socket: Socket): ContainedOwner {
  return { fail: () => socket.destroy() };
}

/** How often node checks the head and request timeouts: often enough for the head timeout to be kept. */
export function timeoutCheckInterval(headersTimeoutMs: number): number {
  return Math.max(50, Math.min(30_000, Math.floor(headersTimeoutMs / 4)));
}

export class Http1Engine extends ProtocolEngine<Http1EngineConfig> {
  readonly server: http.Server<typeof IncomingMessage, typeof Http1Exchange>;
  readonly #connections = new Set<ClientConnection>();
  // The per-request entry points, each inside the containment boundary as a plain try/catch: the owner of an error
  // is found from the exchange in the catch (`lifecycle.contained`), so a request that throws nothing costs no
  // closure or owner object. Each is one function made once, never one per request.
  readonly #startNext = (ctx: ProxyRequest): void => {
    try {
      this.lifecycle.start(ctx);
    } catch (err) {
      this.lifecycle.contained('http1-request', ctx.exchange, err);
    }
  };
  readonly #onRequestContained = (req: IncomingMessage, exchange: Http1Exchange): void => {
    try {
      this.#onRequest(req, exchange);
    } catch (err) {
      this.lifecycle.contained('http1-request', exchange, err);
    }
  };
  readonly #responseClosed = (exchange: DownstreamExchange): void => {
    try {
      this.#nextOnConnection(exchange as Http1Exchange);
    } catch (err) {
      this.lifecycle.contained('http1-request', exchange, err);
    }
  };

  constructor(deps: EngineDeps<Http1EngineConfig>) {
    super(deps);
    const { config } = deps;
    this.server = http.createServer(
      {
        maxHeaderSize: MAX_HEADER_BYTES,
        headersTimeout: config.headersTimeoutMs,
        requestTimeout: config.requestTimeoutMs,
        keepAliveTimeout: config.keepAliveTimeoutMs,
        connectionsCheckingInterval: timeoutCheckInterval(config.headersTimeoutMs),
        // The ingress checks Host itself (also for HTTP/1.0, and refuses duplicates).
        requireHostHeader: false,
        noDelay: true,
        ServerResponse: Http1Exchange,
      },
      this.#onRequestContained,
    );
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => onParseError(err, socket as Socket));
    // An expectation other than 100-continue is ignored (Expect is never forwarded): the request is served as if it
    // had none. node's default answers 417 before the body is read, and a body then cut short got a second answer.
    this.server.on('checkExpectation', this.#onRequestContained);
    this.server.on('connection', (socket: Socket) => this.lifecycle.guard.run('connection', socketOwner(socket), () => this.#onConnection(socket)));
    const onHandover = (req: IncomingMessage, socket: Duplex, head: Buffer): void => this.#onHandover(req, socket as Socket, head);
    this.server.on('upgrade', onHandover);
    this.server.on('connect', onHandover);
    // node starts its header and request timeout checks when an HTTP server starts listening.
    this.server.emit('listening');
  }

  /** Serves a connection a listener accepted (or, `insideConnect`, a CONNECT tunnel's inner connection). */
  accept(socket: Socket, insideConnect = false): void {
    this.server.emit('connection', socket);
    if (insideConnect) (ClientConnection.of(socket) as ClientConnection).insideConnect = true;
    socket.resume();
  }

  get connections(): number {
    return this.#connections.size;
  }

  #onConnection(socket: Socket): void {
    const conn = new ClientConnection(socket);
    this.#connections.add(conn);
    socket.once('close', this.lifecycle.guard.wrap('connection', undefined, () => this.#connectionClosed(conn)));
    if (this.draining) this.#idleWhileDraining(conn);
  }

  #onRequest(req: IncomingMessage, exchange: Http1Exchange): void {
    const conn = ClientConnection.of(req.socket) as ClientConnection;
    conn.lastExchange = exchange;
    const ctx = this.lifecycle.begin(exchange, { site: 'http1-request', url: req.url ?? '', method: req.method ?? 'GET', rawHeaders: req.rawHeaders, insideConnect: conn.insideConnect });
    exchange.onClose(this.#responseClosed);
    if (this.draining) req.socket.setTimeout(0); // not idle any more
    if (conn.current === undefined) {
      conn.current = ctx;
      this.lifecycle.start(ctx);
    } else {
      conn.enqueue(ctx);
    }
  }

  /** An upgrade or CONNECT request node's parser handed over with its socket (inside the containment boundary). */
  #onHandover(req: IncomingMessage, socket: Socket, head: Buffer): void {
    // Pipelined behind a request still in service (node hands the socket over as soon as it parses the head): its
    // turn comes once that response is done and the socket is free again, as for any pipelined request.
    const inService = (socket as Socket & { _httpMessage?: NodeJS.EventEmitter | null })._httpMessage;
    if (inService != null) {
      socket.pause();
      inService.once('finish', () =>
        setImmediate(() => {
          if (!socket.destroyed) this.#onHandover(req, socket, head);
        }),
      );
      return;
    }
    const kind = req.method === 'CONNECT' ? 'connect' : 'upgrade';
    let exchange: SocketExchange | undefined;
    const owner = (): ContainedOwner | undefined =>
      exchange === undefined ? { fail: () => socket.destroy() } : this.lifecycle.ownerOf(exchange)();
    this.lifecycle.guard.run('upgrade', owner, () => {
      exchange = new SocketExchange(req, socket, kind);
      this.#handover(req, socket, head, exchange);
    });
  }

  #handover(req: IncomingMessage, socket: Socket, head: Buffer, exchange: SocketExchange): void {
    const conn = ClientConnection.of(socket);
    if (conn !== undefined) conn.tunnel = true; // drains with the tunnels, not as an idle keep-alive connection
    const ctx = this.lifecycle.begin(exchange, {
      site: 'upgrade',
      url: req.url ?? '',
      method: req.method ?? 'GET',
      rawHeaders: req.rawHeaders,
      hasBody: false,
      insideConnect: conn?.insideConnect === true,
    });
    const decision = decideUpgrade(req, this.config.upgradeTokens);
    const hub = this.hub;
    if (decision.kind === 'refuse' || hub === undefined) {
      if (hub !== undefined && ctx.error === undefined) hub.refused('upgrade');
      this.lifecycle.refuse(ctx, ERRORS.UPGRADE_REFUSED, decision.kind === 'refuse' ? decision.details : 'upgrades are not served here');
    } else if (decision.kind === 'forward') {
      if (hub.draining && ctx.error === undefined) {
        hub.refused('upgrade');
        this.lifecycle.refuse(ctx, ERRORS.DRAINING, 'upgrade while draining');
      }
      exchange.upgradeToken = decision.token;
      ctx.upgrade = { token: decision.token, head };
    }
    this.lifecycle.start(ctx);
  }

  /** A response closed (complete, or abandoned by either side): the next pipelined request starts. */
  #nextOnConnection(exchange: Http1Exchange): void {
    const conn = ClientConnection.of(exchange.req.socket);
    // A socket that is no longer writable (the client left, or `Connection: close`) serves nothing more; its
    // 'close' ends the requests still waiting.
    if (conn === undefined || conn.current?.exchange !== exchange || !conn.socket.writable) return;
    const next = conn.advance();
    // From the next turn of the event loop: undici frees the upstream connection of the response just finished
    // in a microtask, so the next request reuses it instead of opening another.
    if (next !== undefined) setImmediate(this.#startNext, next);
    else if (this.draining) this.#idleWhileDraining(conn);
  }

  /** The client connection closed: every request still on it ends now. */
  #connectionClosed(conn: ClientConnection): void {
    if (!this.#connections.delete(conn)) return;
    for (const ctx of conn.takeAll()) {
      try {
        this.lifecycle.clientClosed(ctx);
      } catch (err) {
        this.lifecycle.contained('http1-request', ctx.exchange, err);
      }
    }
    this.onSettled?.();
  }

  /**
   * The drain begins: every response not yet started closes its connection after it, and an idle connection is
   * closed once it stayed idle for `--drain-idle-grace-ms` (so a request a client is writing at that moment is
   * served, not reset).
   */
  drain(): void {
    this.draining = true;
    for (const conn of this.#connections) {
      const current = conn.current;
      if (current === undefined) this.#idleWhileDraining(conn);
      else if (!current.exchange.headSent) current.exchange.closeAfterResponse();
    }
  }

  /** The end of a drain: every connection left is closed. */
  closeAll(): void {
    this.server.closeAllConnections();
  }

  /** During the drain: an idle connection is closed after the grace (any byte from the client restarts it). */
  #idleWhileDraining(conn: ClientConnection): void {
    if (conn.tunnel) return;
    const graceMs = this.config.drainIdleGraceMs;
    if (graceMs === 0) conn.socket.destroy();
    else conn.socket.setTimeout(graceMs); // node's keep-alive timeout handler destroys the idle socket
  }
}
