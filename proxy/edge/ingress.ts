/**
 * The ingress: two protocol engines — a node:http server (HTTP/1.1, keep-alive) and a node:http2 server (HTTP/2
 * through node's compatibility API) — fed by the listeners (`listeners.ts`: plaintext HTTP/1.1 + h2c, and HTTPS
 * with ALPN). Each client request or stream becomes a `ProxyRequest`, is handed to the chain, and is finished — counters, duration histogram, access-log line, every filter's `onDone` — when the
 * response is closed. Limits are node's own: request head over 60 KiB → 431, head not received within
 * `--headers-timeout-ms` → 408 (whole request: `--request-timeout-ms`). A request target or Host the proxy does not
 * forward is answered before any filter runs (`request-target.ts`), when its turn on the connection comes.
 *
 * Each client connection serves its requests one at a time (`client-connection.ts`): a pipelined request starts
 * when the response before it is complete. When a connection closes, every request on it that is not finished yet
 * — the one in service and those waiting behind it — ends there (499 when nothing was sent) and its upstream
 * request is aborted; node:http itself reports no `close` for a response that never got the socket.
 *
 * HTTP/2: every stream is a request of its own, started at once (streams are independent; there is no
 * pipelining queue). Its head is brought to the HTTP/1.1 form first (`h2-request.ts`), then gets the same hygiene
 * and target rules. Limits: `--h2-max-concurrent-streams` per connection (more are refused with REFUSED_STREAM),
 * the header list as large as an HTTP/1.1 head (a larger one resets the stream), and node's own flood guards
 * (invalid frames, refused streams, unacknowledged SETTINGS and pings, session memory: the connection is closed
 * with ENHANCE_YOUR_CALM). A stream the client resets is `cancelled`, as a client leaving an HTTP/1.1 request.
 * A connection idle for `--keep-alive-timeout-ms` is closed with GOAWAY.
 *
 * Drain (SIGTERM): the listeners close at once; every HTTP/2 connection gets GOAWAY (its open streams finish); every response not yet started, and every request that still
 * arrives, is answered with `Connection: close`; a connection that is idle is closed once it has stayed idle for
 * `--drain-idle-grace-ms` (so a request a client is writing at that moment is served, not reset). The drain is
 * over when no request is left and every connection is closed, or after `--drain-timeout-ms`.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2, { type Http2ServerRequest, type ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config.js';
import { MAX_HEADER_BYTES } from '../config.js';
import type { Chain } from '../chain/chain.js';
import type { Counters } from '../ops/stats.js';
import type { ProxyStage } from '../chain/stage.js';
import { CHAIN_DONE, ProxyRequest } from '../request/context.js';
import { ForwardHeaders } from '../request/headers.js';
import { RequestBody } from '../request/body.js';
import { sanitiseRequestHeaders } from './ingress-headers.js';
import { resolveRequestTarget } from './request-target.js';
import { ERRORS } from '../chain/errors.js';
import { finalStatus } from './final-status.js';
import { checkSni } from '../http/misdirected.js';
import { sendError } from './local-reply.js';
import { ClientConnection } from './client-connection.js';
import { h2RequestHead } from './h2-request.js';
import { EdgeH2Response } from './h2-response.js';
import { addHandshakeHeaders, decideExtendedConnect } from './h2-websocket.js';
import { PlainListener, TlsListener, type Listener } from './listeners.js';
import type { WireProtocol } from '../../lib/preface-sniff.js';
import type { ClientProtocol } from '../api/filter.js';

/** Header fields one HTTP/2 request may carry (node's default, 128, is far below what an HTTP/1.1 head may hold). */
const H2_MAX_HEADER_PAIRS = 2000;
import { attachUpgrades, type UpgradeHandler } from './upgrade.js';

export interface IngressDeps {
  readonly config: ProxyConfig;
  readonly chain: Chain;
  readonly counters: Counters;
  readonly observeDuration: (seconds: number) => void;
  readonly log: Logger;
  /** Stages contributing access-log fields. */
  readonly stages: readonly ProxyStage[];
  /** Upgrade requests (WebSocket) and CONNECT on this listener (`upgrade.ts`). */
  readonly upgrades?: UpgradeHandler;
}

const CTX = Symbol('actor-edge.ctx');
const EMPTY = Buffer.alloc(0);
type TaggedResponse = ServerResponse & { [CTX]?: ProxyRequest };

export class Ingress {
  /** The HTTP/1.1 engine (it listens on no socket itself: the listeners hand it connections). */
  readonly server: http.Server;
  /** The HTTP/2 engine. */
  readonly h2: http2.Http2Server;
  readonly #plain: PlainListener;
  #tls: TlsListener | undefined;
  #inflight = 0;
  readonly #connections = new Set<ClientConnection>();
  readonly #sessions = new Set<ServerHttp2Session>();
  #draining = false;
  #onDrained: (() => void) | undefined;
  #listenerClosed: Promise<void> | undefined;
  readonly #deps: IngressDeps;
  readonly #strip: ReadonlySet<string>;
  readonly #logFields: readonly ProxyStage[];

  constructor(deps: IngressDeps) {
    this.#deps = deps;
    const { config } = deps;
    this.#strip = new Set(config.stripHeaders);
    this.#logFields = deps.stages.filter((s) => s.logFields !== undefined);
    this.server = http.createServer(
      {
        maxHeaderSize: MAX_HEADER_BYTES,
        headersTimeout: config.headersTimeoutMs,
        requestTimeout: config.requestTimeoutMs,
        keepAliveTimeout: config.keepAliveTimeoutMs,
        connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(config.headersTimeoutMs / 4))),
        // The ingress checks Host itself (also for HTTP/1.0, and refuses duplicates).
        requireHostHeader: false,
        noDelay: true,
      },
      (req, res) => this.#onRequest(req, res),
    );
    this.server.on('connection', (socket: Socket) => this.#onConnection(socket));
    // node starts its header and request timeout checks when an HTTP server starts listening.
    this.server.emit('listening');
    this.h2 = http2.createServer(
      {
        settings: { maxConcurrentStreams: config.h2MaxConcurrentStreams, maxHeaderListSize: MAX_HEADER_BYTES, enableConnectProtocol: deps.upgrades !== undefined },
        maxHeaderListPairs: H2_MAX_HEADER_PAIRS,
        Http2ServerResponse: EdgeH2Response,
      },
      (req, res) => this.#onStream(req, res as EdgeH2Response),
    );
    this.h2.on('session', (session: ServerHttp2Session) => this.#onSession(session));
    // node's compatibility API hands CONNECT streams (RFC 8441's extended CONNECT among them) to 'connect' only.
    this.h2.on('connect', (req: Http2ServerRequest, res: http2.Http2ServerResponse) => this.#onStream(req, res as EdgeH2Response));
    this.#plain = new PlainListener(this.#accept, config.headersTimeoutMs);
    if (deps.upgrades !== undefined) attachUpgrades(this.server, deps.upgrades);
    // One listener per server, not per request or connection: node calls it with `this` = the closed object.
    const ingress = this;
    this.#onClose = function (this: TaggedResponse) {
      ingress.#responseClosed(this);
    };
    this.#onSocketClose = function (this: Socket) {
      ingress.#connectionClosed(this);
    };
    this.#onChainDone = (ctx: ProxyRequest) => {
      if (ctx.clientState === 'closed') this.#finish(ctx);
    };
  }

  /** A listener accepted a connection: the engine for its protocol takes it. */
  readonly #accept = (socket: Socket, protocol: WireProtocol): void => {
    if (protocol === 'h2') {
      this.h2.emit('connection', socket);
      return;
    }
    this.server.emit('connection', socket);
    socket.resume();
  };

  readonly #onClose: (this: TaggedResponse) => void;
  readonly #onSocketClose: (this: Socket) => void;
  readonly #startNext = (ctx: ProxyRequest): void => this.#start(ctx);
  readonly #onChainDone: (ctx: ProxyRequest) => void;

  get inflight(): number {
    return this.#inflight;
  }

  get draining(): boolean {
    return this.#draining;
  }

  #onConnection(socket: Socket): void {
    const conn = new ClientConnection(socket);
    this.#connections.add(conn);
    socket.once('close', this.#onSocketClose);
    if (this.#draining) this.#idleWhileDraining(conn);
  }

  #onSession(session: ServerHttp2Session): void {
    this.#sessions.add(session);
    session.once('close', () => {
      this.#sessions.delete(session);
      if (this.#draining) this.#checkDrained();
    });
    session.on('error', () => undefined); // a broken connection ends its streams ('close' follows)
    session.setTimeout(this.#deps.config.keepAliveTimeoutMs, () => session.close());
    if (this.#draining) session.close();
  }

  /**
   * The context of a request, with the ingress's own refusal recorded (answered before any filter, when the
   * request has its turn). `raw`: node's flat HTTP/1.1-form head; `url`: the request target.
   */
  #context(
    req: IncomingMessage,
    res: ServerResponse,
    protocol: ClientProtocol,
    encrypted: boolean,
    raw: readonly string[],
    hasBody: boolean | undefined,
    method = req.method ?? 'GET',
  ): ProxyRequest {
    const startedAt = performance.now();
    this.#inflight++;
    const { config, log } = this.#deps;
    const remote = req.socket.remoteAddress ?? '';
    const scheme = encrypted ? 'https' : 'http';
    const head = sanitiseRequestHeaders(raw, remote, scheme, this.#strip, config.xffTrustedHops);
    const target = resolveRequestTarget(req.url ?? '', head);
    const body = (hasBody ?? head.hasBody) ? new RequestBody(req, config.maxReplayBodyBytes) : null;
    const ctx = new ProxyRequest({
      req,
      res,
      requestId: head.requestId,
      method,
      path: target.path,
      authority: target.authority,
      scheme,
      protocol,
      remoteAddress: remote,
      headers: new ForwardHeaders(target.headers),
      body,
      startedAt,
      log,
    });
    (res as TaggedResponse)[CTX] = ctx;
    res.on('close', this.#onClose);
    if (target.kind === 'refuse') {
      ctx.error = target.error;
      ctx.details = target.details;
    } else if (encrypted && config.misdirected421) {
      const sni = checkSni(target.authority, (req.socket as TLSSocket).servername);
      if (sni.kind === 'misdirected') {
        ctx.error = ERRORS.MISDIRECTED;
        ctx.details = `authority ${sni.host} is not the connection's SNI ${sni.sni}`;
      }
    }
    return ctx;
  }

  /** An HTTP/2 stream: a request of its own, started at once. */
  #onStream(req: Http2ServerRequest, res: EdgeH2Response): void {
    const h2 = h2RequestHead(req.rawHeaders);
    const upgrades = this.#deps.upgrades;
    const connect = upgrades === undefined ? undefined : decideExtendedConnect(req.method, req.headers[':protocol'], this.#deps.config.upgradeTokens);
    const handshake = connect !== undefined && connect.kind !== 'none';
    if (connect?.kind === 'forward') addHandshakeHeaders(h2.raw, connect.token);
    const ctx = this.#context(
      req as unknown as IncomingMessage,
      res as unknown as ServerResponse,
      'h2',
      req.stream.session?.encrypted === true,
      h2.raw,
      // The stream of an extended CONNECT carries the tunnel, not a body.
      handshake ? false : !req.stream.endAfterHeaders,
      handshake ? 'GET' : req.method,
    );
    if (h2.authorityConflict && ctx.error === undefined) {
      ctx.error = ERRORS.INVALID_AUTHORITY;
      ctx.details = 'Host differs from :authority';
    }
    if (upgrades !== undefined && handshake && ctx.error === undefined) {
      if (connect.kind === 'refuse') {
        upgrades.hub.refused('upgrade');
        ctx.error = ERRORS.UPGRADE_REFUSED;
        ctx.details = connect.details;
      } else if (upgrades.hub.draining) {
        upgrades.hub.refused('upgrade');
        ctx.error = ERRORS.DRAINING;
        ctx.details = 'upgrade while draining';
      } else {
        ctx.upgrade = { token: connect.token, head: EMPTY, opened: () => undefined };
      }
    }
    this.#start(ctx);
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const ctx = this.#context(req, res, 'http/1.1', (req.socket as TLSSocket).encrypted === true, req.rawHeaders, undefined);
    const conn = ClientConnection.of(req.socket) as ClientConnection;
    if (this.#draining) req.socket.setTimeout(0); // not idle any more
    if (conn.current === undefined) {
      conn.current = ctx;
      this.#start(ctx);
    } else {
      conn.enqueue(ctx);
    }
  }

  /** Runs a request that has its turn on its connection (unless its client left while it waited). */
  #start(ctx: ProxyRequest): void {
    if (ctx.clientState !== 'open') return;
    if (this.#draining) ctx.res.shouldKeepAlive = false;
    if (ctx.error !== undefined) {
      sendError(ctx, ctx.error, ctx.details);
      ctx.chainState = CHAIN_DONE;
      return;
    }
    this.#deps.chain.run(ctx, this.#onChainDone);
  }

  /** A response closed (complete, or abandoned by either side): end its request; the next pipelined one starts. */
  #responseClosed(res: TaggedResponse): void {
    const ctx = res[CTX];
    if (ctx === undefined) return;
    res[CTX] = undefined;
    this.#clientClosed(ctx);
    if (ctx.protocol === 'h2') return;
    const conn = ClientConnection.of(ctx.req.socket);
    // A socket that is no longer writable (the client left, or `Connection: close`) serves nothing more; its
    // 'close' ends the requests still waiting.
    if (conn === undefined || conn.current !== ctx || !conn.socket.writable) return;
    const next = conn.advance();
    // From the next turn of the event loop: undici frees the upstream connection of the response just finished
    // in a microtask, so the next request reuses it instead of opening another.
    if (next !== undefined) setImmediate(this.#startNext, next);
    else if (this.#draining) this.#idleWhileDraining(conn);
  }

  /** The client connection closed: every request still on it ends now. */
  #connectionClosed(socket: Socket): void {
    const conn = ClientConnection.of(socket);
    if (conn === undefined || !this.#connections.delete(conn)) return;
    for (const ctx of conn.takeAll()) this.#clientClosed(ctx);
    if (this.#draining) this.#checkDrained();
  }

  /**
   * The client side of a request is over: stop whatever still works for it, and finish once the chain is done
   * too. A pipelined request that never had its turn ends here as cancelled (499).
   */
  #clientClosed(ctx: ProxyRequest): void {
    if (ctx.clientState !== 'open') return;
    ctx.clientState = 'closed';
    if (ctx.chainState.kind === 'idle') {
      ctx.error = ERRORS.DOWNSTREAM_CLOSED;
      ctx.details = 'client closed the connection before this pipelined request had its turn';
      ctx.chainState = CHAIN_DONE;
    } else if (!ctx.res.writableFinished) {
      // Marked destroyed first (node may not have done so yet when the socket's 'close' comes first), so the
      // aborted upstream request is seen as `cancelled` — never a reset that evicts or re-runs.
      ctx.res.destroy();
      ctx.abortFilters();
      ctx.upstream?.cancel();
    }
    if (ctx.chainState.kind === 'done') this.#finish(ctx);
  }

  /**
   * Finishes one request — counters, duration, access log, every filter's onDone — when both its response has
   * closed and the chain has returned (a small response can close before the chain observed its headers).
   */
  #finish(ctx: ProxyRequest): void {
    if (ctx.clientState === 'finished') return;
    ctx.clientState = 'finished';
    const { counters, chain, log, config } = this.#deps;
    const { status, error } = finalStatus(ctx);
    // A request body the upstream did not read completely: the connection cannot carry another request.
    if (ctx.protocol === 'http/1.1' && ctx.body !== null && ctx.body.started && !ctx.body.complete) ctx.req.socket?.destroy();
    ctx.status = status;
    counters.countResponse(status);
    const durationMs = performance.now() - ctx.startedAt;
    this.#deps.observeDuration(durationMs / 1000);
    if (config.accessLog) this.#accessLog(ctx, status, durationMs, log);
    chain.done(ctx, status, error);
    this.#inflight--;
    if (this.#draining) this.#checkDrained();
  }

  #accessLog(ctx: ProxyRequest, status: number, durationMs: number, log: Logger): void {
    const line: Record<string, unknown> = {
      requestId: ctx.requestId,
      method: ctx.method,
      authority: ctx.authority,
      path: ctx.path,
      status,
      protocol: ctx.protocol,
      durationMs: Math.round(durationMs * 1000) / 1000,
      upstream: ctx.upstreamAddress ?? null,
      extprocMs: ctx.extProc === undefined ? null : Math.round(ctx.extProc.elapsedMs * 1000) / 1000,
      attempts: ctx.attempt + 1,
    };
    if (ctx.route !== undefined) line.routeSource = ctx.route.source;
    if (ctx.error !== undefined) line.error = ctx.error.code;
    if (ctx.details !== undefined) line.details = ctx.details;
    if (ctx.responseState === 'truncated') line.aborted = true;
    for (const stage of this.#logFields) {
      const extra = stage.logFields?.(ctx);
      if (extra !== undefined) Object.assign(line, extra);
    }
    log.info(line, 'access');
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
  listenTls(host: string, port: number, files: { certFile: string; keyFile: string }): Promise<void> {
    this.#tls = new TlsListener(files, this.#accept, this.#deps.log, this.#deps.config.headersTimeoutMs);
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
    for (const conn of this.#connections) {
      const current = conn.current;
      if (current === undefined) this.#idleWhileDraining(conn);
      else if (!current.res.headersSent) current.res.shouldKeepAlive = false;
    }
    for (const session of this.#sessions) session.close(); // GOAWAY: open streams finish
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
    this.server.closeAllConnections();
    for (const session of this.#sessions) session.destroy();
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

  /** During the drain: an idle connection is closed after the grace (any byte from the client restarts it). */
  #idleWhileDraining(conn: ClientConnection): void {
    if (conn.tunnel) return;
    const graceMs = this.#deps.config.drainIdleGraceMs;
    if (graceMs === 0) conn.socket.destroy();
    else conn.socket.setTimeout(graceMs); // node's keep-alive timeout handler destroys the idle socket
  }

  #isDrained(): boolean {
    return this.#inflight === 0 && this.#connections.size === 0 && this.#sessions.size === 0;
  }

  #checkDrained(): void {
    if (this.#isDrained()) this.#onDrained?.();
  }
}
