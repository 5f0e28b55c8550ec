/**
 * The HTTP/2 protocol engine: a node:http2 server (compatibility API; listening on no socket itself) whose every
 * stream's response is an `H2Exchange`. Every stream is a request of its own, started at once (streams are
 * independent: no pipelining queue); the request lifecycle (`lifecycle.ts`) does the rest. Its head is brought to
 * the HTTP/1.1 form first (`h2-request.ts`), then gets the same hygiene and target rules.
 *
 * An RFC 8441 extended CONNECT (`:protocol websocket`, or a token `--upgrade-allow` names;
 * SETTINGS_ENABLE_CONNECT_PROTOCOL is announced when upgrades are served) is a WebSocket handshake: it runs the
 * chain as a `GET` with `Upgrade` towards the worker (`h2-websocket.ts`), and on the worker's 101 the stream is
 * answered `:status 200` and carries the tunnel. Any other `:protocol` is refused 403.
 *
 * Limits: `--h2-max-concurrent-streams` per connection (more are refused with REFUSED_STREAM), the header list as
 * large as an HTTP/1.1 head (a larger one resets the stream), and node's own flood guards (invalid frames, refused
 * streams, unacknowledged SETTINGS and pings, session memory: the connection is closed with ENHANCE_YOUR_CALM). A
 * stream the client resets is `cancelled`, as a client leaving an HTTP/1.1 request. A connection idle for
 * `--keep-alive-timeout-ms` is closed with GOAWAY — open streams count, bytes alone do not, so a client trickling a
 * HEADERS frame in is closed too; a new connection must open its first stream within `--headers-timeout-ms`; a
 * stream's request (head and body) must arrive within `--request-timeout-ms` (408 `PROXY_ERR_REQUEST_TIMEOUT`, as
 * node answers an HTTP/1.1 request 408). A client's FIN, or a PING it does not acknowledge within
 * `--keep-alive-timeout-ms`, ends the connection and its streams as a client gone. On drain every connection gets
 * GOAWAY and its open streams finish.
 */
import { SessionClock } from './session-clock.js';
import http2, { type Http2ServerRequest, type ServerHttp2Session } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { MAX_HEADER_BYTES } from '../../lib/http-limits.js';
import { ERRORS } from '../http/errors.js';
import { H2Exchange } from './h2-exchange.js';
import { h2RequestHead } from './h2-request.js';
import { addHandshakeHeaders, decideExtendedConnect } from './h2-websocket.js';
import type { EngineDeps } from './lifecycle.js';
import { ProtocolEngine } from './protocol-engine.js';
import type { ContainedOwner } from '../../lib/containment.js';

/** Header fields one HTTP/2 request may carry (node's default, 128, is far below what an HTTP/1.1 head may hold). */
const H2_MAX_HEADER_PAIRS = 2000;

export interface H2EngineConfig {
  /** Streams one client connection may have open at once (`--h2-max-concurrent-streams`). */
  readonly h2MaxConcurrentStreams: number;
  /** A new connection must open its first stream within this time (`--headers-timeout-ms`). */
  readonly headersTimeoutMs: number;
  /** A stream's request (head and body) must arrive within this time; 0: no limit (`--request-timeout-ms`). */
  readonly requestTimeoutMs: number;
  /** A connection with no stream open for this long is closed with GOAWAY (`--keep-alive-timeout-ms`). */
  readonly keepAliveTimeoutMs: number;
  readonly upgradeTokens: ReadonlySet<string>;
}

/** A session whose own handling threw is closed at once (its streams with it). */
function sessionOwner(session: ServerHttp2Session): ContainedOwner {
  return { fail: () => session.destroy() };
}

const CLOCK = Symbol('actor-edge.h2-clock');
type ClockedSession = ServerHttp2Session & { [CLOCK]?: SessionClock };

const EMPTY = Buffer.alloc(0);

export class H2Engine extends ProtocolEngine<H2EngineConfig> {
  readonly server: http2.Http2Server<typeof IncomingMessage, typeof ServerResponse, typeof Http2ServerRequest, typeof H2Exchange>;
  /** Open sessions and the connection each runs on (undefined for one node accepted itself). */
  readonly #sessions = new Map<ServerHttp2Session, Socket | undefined>();
  /** The connection `accept` is handing to node (its session is created while it does). */
  #accepting: Socket | undefined;

  constructor(deps: EngineDeps<H2EngineConfig>) {
    super(deps);
    const { config, hub } = deps;
    this.server = http2.createServer(
      {
        settings: { maxConcurrentStreams: config.h2MaxConcurrentStreams, maxHeaderListSize: MAX_HEADER_BYTES, enableConnectProtocol: hub !== undefined },
        maxHeaderListPairs: H2_MAX_HEADER_PAIRS,
        Http2ServerResponse: H2Exchange,
      },
      (req, res) => this.#contained(req, res as H2Exchange),
    );
    const guard = this.lifecycle.guard;
    this.server.on('session', (session: ServerHttp2Session) => guard.run('connection', sessionOwner(session), () => this.#onSession(session)));
    // node's compatibility API hands CONNECT streams (RFC 8441's extended CONNECT among them) to 'connect' only.
    this.server.on('connect', (req: Http2ServerRequest, res: http2.Http2ServerResponse) => this.#contained(req, res as H2Exchange));
    // An expectation other than 100-continue is ignored, as on HTTP/1.1 (node's default answers 417).
    this.server.on('checkExpectation', (req: Http2ServerRequest, res: http2.Http2ServerResponse) => this.#contained(req, res as H2Exchange));
  }

  /** Serves a connection a listener accepted. */
  accept(socket: Socket): void {
    this.#accepting = socket;
    try {
      this.server.emit('connection', socket);
    } finally {
      this.#accepting = undefined;
    }
  }

  get sessions(): number {
    return this.#sessions.size;
  }

  #onSession(session: ServerHttp2Session): void {
    const socket = this.#accepting;
    this.#sessions.set(session, socket);
    const settled = (): void => {
      if (this.#sessions.delete(session)) this.onSettled?.();
    };
    session.once('close', settled);
    // The connection closing settles it too: a session destroyed with a stream still open (an extended CONNECT
    // tunnel, on some Node.js versions) may never emit 'close' itself.
    socket?.once('close', settled);
    session.on('error', () => undefined); // a broken connection ends its streams ('close' follows)
    // HTTP/2 has no half-closed connection: a client's FIN (the listeners keep connections half-open for HTTP/1.1's
    // sake) is a client gone, and every stream still open on it ends as such.
    socket?.once('end', () => session.destroy());
    const clock = new SessionClock(session, this.config.keepAliveTimeoutMs, this.config.headersTimeoutMs);
    (session as ClockedSession)[CLOCK] = clock;
    session.once('close', () => clock.stop());
    if (this.draining) session.close();
  }

  /**
   * Every stream, whatever its method and pseudo-headers, runs inside the containment boundary: a plain try/catch,
   * the owner found from the exchange only when something threw (nothing made per stream for it).
   */
  #contained(req: Http2ServerRequest, exchange: H2Exchange): void {
    try {
      this.#onStream(req, exchange);
    } catch (err) {
      this.lifecycle.contained('h2-stream', exchange, err);
    }
  }

  /** An HTTP/2 stream: a request of its own, started at once. */
  #onStream(req: Http2ServerRequest, exchange: H2Exchange): void {
    const clock = (req.stream.session as ClockedSession | undefined)?.[CLOCK];
    if (clock !== undefined) {
      clock.streamOpened();
      req.stream.once('close', () => clock.streamClosed());
    }
    const h2 = h2RequestHead(req.rawHeaders);
    const hub = this.hub;
    const connect = hub === undefined ? undefined : decideExtendedConnect(req.method, req.headers[':protocol'], this.config.upgradeTokens);
    const handshake = connect !== undefined && connect.kind !== 'none';
    if (handshake) exchange.kind = 'extended-connect';
    if (connect?.kind === 'forward') addHandshakeHeaders(h2.raw, connect.token);
    const ctx = this.lifecycle.begin(exchange, {
      site: 'h2-stream',
      // A classic CONNECT (no :protocol) has no :path: its target is its :authority (authority-form, refused as
      // on HTTP/1.1); any other stream without a :path has no target at all.
      url: req.url ?? (req.method === 'CONNECT' && !handshake ? (req.headers[':authority'] ?? '') : ''),
      // The stream of an extended CONNECT carries the tunnel, not a body; towards the worker it is a GET.
      method: handshake ? 'GET' : req.method,
      rawHeaders: h2.raw,
      hasBody: handshake ? false : !req.stream.endAfterHeaders,
    });
    if (h2.authorityConflict) this.lifecycle.refuse(ctx, ERRORS.INVALID_AUTHORITY, 'Host differs from :authority');
    if (hub !== undefined && connect !== undefined && connect.kind !== 'none' && ctx.error === undefined) {
      if (connect.kind === 'refuse') {
        hub.refused('upgrade');
        this.lifecycle.refuse(ctx, ERRORS.UPGRADE_REFUSED, connect.details);
      } else if (hub.draining) {
        hub.refused('upgrade');
        this.lifecycle.refuse(ctx, ERRORS.DRAINING, 'upgrade while draining');
      } else {
        ctx.upgrade = { token: connect.token, head: EMPTY };
      }
    }
    const timeoutMs = this.config.requestTimeoutMs;
    if (timeoutMs > 0 && ctx.body !== null && !req.complete) {
      // The whole request must arrive in time, as node's own --request-timeout-ms does for HTTP/1.1.
      const timer = setTimeout(this.lifecycle.guard.wrap('h2-stream', this.lifecycle.ownerOf(exchange), () => this.lifecycle.requestTimedOut(ctx, timeoutMs)), timeoutMs);
      const clear = (): void => clearTimeout(timer);
      req.once('end', clear);
      req.stream.once('close', clear);
    }
    this.lifecycle.start(ctx);
  }

  /** The drain begins: every connection gets GOAWAY (its open streams finish). */
  drain(): void {
    this.draining = true;
    for (const session of this.#sessions.keys()) session.close();
  }

  /** The end of a drain: every session left is destroyed. */
  closeAll(): void {
    for (const [session, socket] of this.#sessions) {
      session.destroy();
      socket?.destroy(); // node may leave it open when a stream outlives the session's destroy
    }
  }
}
