/**
 * The HTTP/2 downstream exchange (`http/exchange.ts`), as node's compatibility `Http2ServerResponse` extended —
 * the ingress's HTTP/2 engine creates every stream's response as an `H2Exchange` (node's `Http2ServerResponse`
 * server option). One stream is one request: an ordinary one, or an RFC 8441 extended CONNECT (WebSocket over
 * HTTP/2), whose tunnel is the stream itself once answered `:status 200`.
 *
 * A response is complete when its stream closed without an error: node's compatibility object reports its
 * writable side finished also when the client reset the stream, which here is a client that went away. Trailers
 * always follow the body as HTTP/2 trailers (gRPC's status travels there); the worker's `Trailer` declaration is
 * not relayed.
 *
 * A response written in full while the client still sends its request (an early answer: a 408, a refusal, a
 * worker that answered before reading the whole body) ends the stream with RST_STREAM NO_ERROR, as RFC 9113 §8.1
 * has a server ask the client to stop sending: node closes such a stream itself only when nothing read its
 * request body, and a stream left half-open would keep its request in flight for as long as the client keeps it.
 * The exchange is over when its stream closes, whether or not node's compatibility object reports it (it does
 * not for a HEAD stream the client resets).
 */
import http2, { type Http2ServerRequest } from 'node:http2';
import type { Duplex } from 'node:stream';
import type { ClientProtocol } from '../api/filter.js';
import type { ConnectionInfo, DownstreamExchange, ExchangeKind, TrailerPairs } from '../http/exchange.js';
import { ERRORS, type ProxyErrorSpec } from '../http/errors.js';
import { trailerObject } from '../http/trailers.js';
import { connectionInfo } from './connection-info.js';
import { addCloseListener } from './close-listeners.js';

/** The handshake headers that have no meaning on HTTP/2 (RFC 8441 §5: the 200 replaces the 101's accept key). */
const H2_HANDSHAKE_DROP: ReadonlySet<string> = new Set(['sec-websocket-accept']);

/** How long a complete response waits for node to send its trailers before the request side is closed anyway. */
const TRAILERS_WAIT_MS = 50;

export class H2Exchange extends http2.Http2ServerResponse implements DownstreamExchange {
  /** `extended-connect` once the engine saw an RFC 8441 handshake on this stream. */
  kind: ExchangeKind = 'request';
  #tunnelStatus = 0;

  constructor(stream: http2.ServerHttp2Stream) {
    super(stream);
    stream.once('finish', () => this.#responseWritten());
  }

  /**
   * RFC 9113 §8.1: the response is complete; a request side the client has not ended yet (its END_STREAM not
   * received: it is still sending, or blocked on flow control because nothing reads the body) is closed without
   * error. The reset waits for the trailers: node's compatibility response sends them (empty or not) after its last
   * DATA frame, on 'wantTrailers', which comes after 'finish'; a reset before them would lose a gRPC status.
   */
  #responseWritten(): void {
    const stream = this.stream;
    // A tunnel's stream carries both directions: the worker's end is passed on, the client may go on sending.
    if (this.#tunnelStatus !== 0 || stream.closed || stream.endAfterHeaders || stream.readableEnded) return;
    if (stream.state.remoteClose === 1) return; // the request is complete: the stream closes by itself
    if (stream.sentTrailers !== undefined || this.#endedAtHeaders) return this.#closeRequestSide();
    stream.once('wantTrailers', () => setImmediate(() => this.#closeRequestSide()));
    // A response that ended with its HEADERS frame sends no trailers: its stream is closed all the same.
    setTimeout(() => this.#closeRequestSide(), TRAILERS_WAIT_MS).unref();
  }

  #closeRequestSide(): void {
    const stream = this.stream;
    if (!stream.closed && !stream.destroyed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
  }

  /** Set by `respondHeadOnly`: this response ended with its HEADERS frame. */
  #endedAtHeaders = false;

  get protocol(): ClientProtocol {
    return 'h2';
  }

  get connectionInfo(): ConnectionInfo {
    return connectionInfo(this.stream.session?.socket, '2.0');
  }

  get remoteAddress(): string {
    return this.stream.session?.socket?.remoteAddress ?? '';
  }

  get encrypted(): boolean {
    return this.stream.session?.encrypted === true;
  }

  get requestBody(): AsyncIterable<Buffer> {
    return this.req as Http2ServerRequest;
  }

  get carriesGrpc(): boolean {
    return true;
  }

  get headSent(): boolean {
    return this.headersSent;
  }

  get sentStatus(): number {
    return this.#tunnelStatus !== 0 ? this.#tunnelStatus : this.headersSent ? this.statusCode : 0;
  }

  get complete(): boolean {
    // A reset stream reports its writable side finished too: only a stream closed without error completed.
    const rstCode = this.stream.rstCode;
    return this.stream.writableFinished && (rstCode === undefined || rstCode === http2.constants.NGHTTP2_NO_ERROR);
  }

  get gone(): boolean {
    return this.stream.destroyed || this.writableEnded;
  }

  refusesHead(status: number): ProxyErrorSpec | undefined {
    // An RFC 8441 client reads any 2xx as "tunnel open": a worker that did not switch protocols is an error here.
    return this.kind === 'extended-connect' && status >= 200 && status < 300 ? ERRORS.UPGRADE_NOT_ACCEPTED : undefined;
  }

  trailersAllowed(): boolean {
    return false;
  }

  startResponse(status: number, headers: readonly string[]): void {
    this.writeHead(status, headers as unknown as http2.OutgoingHttpHeaders);
  }

  sendBody(chunk: Buffer): boolean {
    return this.write(chunk);
  }

  whenWritable(resume: () => void): void {
    this.once('drain', resume);
  }

  respondHeadOnly(status: number, headers: readonly string[]): void {
    const head: http2.OutgoingHttpHeaders = { ':status': status };
    for (let i = 0; i < headers.length; i += 2) {
      const name = (headers[i] as string).toLowerCase();
      const prev = head[name];
      const value = headers[i + 1] as string;
      head[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev as string, value];
    }
    // The stream's own respond, ending it with the HEADERS frame (node's compatibility API always sends a DATA end).
    this.stream.respond(head, { endStream: true });
    this.#endedAtHeaders = true;
    this.end();
    this.#responseWritten(); // the stream's writable side is finished without its 'finish'
  }

  finishResponse(body?: Buffer, trailers?: TrailerPairs): void {
    // node's HTTP/2 response takes trailers as an object (pairs would be read as fields named 0, 1, ...).
    if (trailers !== undefined) this.addTrailers(trailerObject(trailers));
    if (body === undefined) this.end();
    else this.end(body);
  }

  abortResponse(): void {
    // RST_STREAM INTERNAL_ERROR: the reset `destroy()` sends alone (NO_ERROR) reads as a complete response to a
    // client such as node's. Destroyed at once, so the exchange is gone before anything else runs.
    const stream = this.stream;
    if (!stream.closed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    this.destroy();
  }

  closeAfterResponse(): void {
    // Streams are independent: the drain closes the session with GOAWAY instead.
  }

  discardUnreadBody(): void {
    // The stream is closed on its own; the connection carries other streams.
  }

  /** RFC 8441: the worker's 101 becomes `:status 200` on the stream, which then carries the tunnel. */
  openTunnel(_status: number, headers: readonly string[]): Duplex | undefined {
    const stream = this.stream;
    if (stream.destroyed || this.headersSent) return undefined;
    const answer: Record<string, string | string[]> = {};
    for (let i = 0; i < headers.length; i += 2) {
      const name = (headers[i] as string).toLowerCase();
      if (H2_HANDSHAKE_DROP.has(name)) continue;
      const prev = answer[name];
      const value = headers[i + 1] as string;
      answer[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    }
    this.writeHead(200, answer);
    this.#tunnelStatus = 200;
    return stream;
  }

  /** See `close-listeners.ts`. */
  closeListeners: ((exchange: DownstreamExchange) => void)[] | undefined = undefined;

  /** See `DownstreamExchange.owner`. */
  owner: unknown = undefined;

  onClose(listener: (exchange: DownstreamExchange) => void): void {
    addCloseListener<DownstreamExchange>(this, listener, this.stream);
  }
}
