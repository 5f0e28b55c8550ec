/**
 * One downstream exchange: the client side of one request, whatever the client spoke. The edge has one adapter
 * per kind (`edge/http1-exchange.ts`: an HTTP/1.1 response, and an HTTP/1.1 upgrade or CONNECT socket;
 * `edge/h2-exchange.ts`: an HTTP/2 stream, and an RFC 8441 extended CONNECT stream); the lifecycle, the chain and
 * the response writer only ever see this interface, so none of them branches on the protocol.
 *
 * A response is written as a head (`startResponse`), body chunks (`sendBody`, which reports backpressure), and
 * an end (`finishResponse`, with trailers when the exchange can carry them). An upgrade or CONNECT exchange can
 * instead become a tunnel (`openTunnel`): the head is written in that protocol's way and the client side is handed
 * over as a duplex stream.
 */
import type { Duplex } from 'node:stream';
import type { ClientProtocol } from '../api/filter.js';
import type { ProxyErrorSpec } from './errors.js';

/** What kind of downstream exchange this is. */
export type ExchangeKind =
  /** An ordinary request (HTTP/1.1 response or HTTP/2 stream). */
  | 'request'
  /** An HTTP/1.1 upgrade handshake (WebSocket) on a socket node's parser handed over. */
  | 'upgrade'
  /** An RFC 8441 extended CONNECT (WebSocket over HTTP/2). */
  | 'extended-connect'
  /** A CONNECT on a CONNECT listener. */
  | 'connect';

/** The connection an exchange arrived on (for ext_proc attributes and the access log). */
export interface ConnectionInfo {
  readonly remoteAddress: string;
  readonly remotePort: number | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  /** TLS (the HTTPS or TLS CONNECT listener). */
  readonly encrypted: boolean;
  /** `1.0`, `1.1` or `2.0`. */
  readonly httpVersion: string;
  /** A number unique to the connection within this process. */
  readonly id: number;
  /** The TLS server name the client asked for (SNI), when encrypted and sent. */
  readonly serverName: string | undefined;
  /** The TLS version negotiated (`TLSv1.3`, `TLSv1.2`), when encrypted. */
  readonly tlsVersion: string | undefined;
}

/** Trailer fields as `[name, value]` pairs. */
export type TrailerPairs = readonly (readonly [string, string])[];

export interface DownstreamExchange {
  readonly kind: ExchangeKind;
  /** The protocol the client spoke: `http/1.1` (HTTP/1.0 included) or `h2`. */
  readonly protocol: ClientProtocol;
  /** The connection's details, read when asked (ext_proc attributes, the access log). */
  readonly connectionInfo: ConnectionInfo;
  /** The peer's address (cheap: read on every request). */
  readonly remoteAddress: string;
  /** The connection is TLS (cheap: read on every request). */
  readonly encrypted: boolean;
  /** The request body as the client sends it (read at most once, by `request/body.ts`). */
  readonly requestBody: AsyncIterable<Buffer>;
  /** The client can take an HTTP/2 stream end to end (gRPC: streaming both ways, trailers). */
  readonly carriesGrpc: boolean;

  /** A response head (or a tunnel's) has been written. */
  readonly headSent: boolean;
  /** The status written (0 before the head). */
  readonly sentStatus: number;
  /** The response (or tunnel) ended normally: everything written, the client did not go away first. */
  readonly complete: boolean;
  /** Nothing more can be written: the client went away, or the response is complete. */
  readonly gone: boolean;

  /**
   * A head this exchange cannot relay as the answer to its request (an RFC 8441 client reads any 2xx as "tunnel
   * open", so a worker's 2xx without switching protocols cannot be relayed): the catalog error to answer instead.
   */
  refusesHead(status: number): ProxyErrorSpec | undefined;
  /**
   * The worker's `Trailer` declaration can be relayed with this head: trailers will follow it (HTTP/1.1: only a
   * chunked response carries them). HTTP/2 sends trailers without a declaration.
   */
  trailersAllowed(method: string, status: number, headers: readonly string[]): boolean;

  /** Writes the head; throws for a header node refuses (the caller answers 500 instead). */
  startResponse(status: number, headers: readonly string[]): void;
  /**
   * Writes a response that has no body and ends with its head (HTTP/2: END_STREAM on the HEADERS frame — gRPC's
   * trailers-only form); throws for a header node refuses.
   */
  respondHeadOnly(status: number, headers: readonly string[]): void;
  /** Writes a body chunk; false: wait for `whenWritable` before the next. */
  sendBody(chunk: Buffer): boolean;
  /** Calls `resume` once when the client can take more. */
  whenWritable(resume: () => void): void;
  /** Ends the response, with a last body and the trailers when given (dropped where the response cannot carry them). */
  finishResponse(body?: Buffer, trailers?: TrailerPairs): void;
  /** Abandons the response: the client sees it cut off (or reset). */
  abortResponse(): void;
  /** This connection serves no request after this one (the drain; HTTP/1.1 `Connection: close`). */
  closeAfterResponse(): void;
  /**
   * The request is finished with its request body not read to the end: the connection cannot carry another
   * request (HTTP/1.1 closes it; an HTTP/2 stream is on its own anyway).
   */
  discardUnreadBody(): void;
  /**
   * Answers an upgrade or CONNECT (`status`: the worker's 101, or 200 for CONNECT) in this exchange's protocol and
   * hands over the client side; undefined when the client is gone.
   */
  openTunnel(status: number, headers: readonly string[]): Duplex | undefined;
  /**
   * Calls `listener` once, with this exchange, when the exchange is over (response finished or abandoned, tunnel
   * closed): one function can serve every exchange, with no closure made per request.
   */
  onClose(listener: (exchange: DownstreamExchange) => void): void;
  /**
   * The lifecycle's alone (`edge/lifecycle.ts`): the request on this exchange, where the containment boundary
   * finds what to end when work on it throws. A field, so that finding it costs nothing until something throws.
   */
  owner: unknown;
}
