/**
 * The HTTP/1.1 downstream exchanges (`http/exchange.ts`), as node's own `ServerResponse` extended — the ingress's
 * HTTP/1.1 engine creates every response as an `Http1Exchange` (node's `ServerResponse` server option), so an
 * exchange costs no object of its own:
 *
 * - `Http1Exchange`: an ordinary response on a keep-alive connection. Trailers go out only on a chunked response
 *   (node's own rule: not for HEAD, 204, 304, a `Content-Length` body, or an HTTP/1.0 client).
 * - `SocketExchange`: a request node's parser handed over with its socket — an upgrade handshake (WebSocket) or a
 *   CONNECT. Its answer is written on the socket, which then serves nothing more; or it becomes a tunnel: the
 *   worker's 101 (or, for CONNECT, `200 Connection Established`) is written raw and the socket handed over.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { ClientProtocol } from '../api/filter.js';
import type { ConnectionInfo, DownstreamExchange, ExchangeKind, TrailerPairs } from '../http/exchange.js';
import type { ProxyErrorSpec } from '../http/errors.js';
import { connectionInfo } from './connection-info.js';
import { addCloseListener } from './close-listeners.js';

const CONTENT_LENGTH = 'content-length';

export class Http1Exchange extends ServerResponse implements DownstreamExchange {
  get kind(): ExchangeKind {
    return 'request';
  }

  get protocol(): ClientProtocol {
    return 'http/1.1';
  }

  get connectionInfo(): ConnectionInfo {
    return connectionInfo(this.req.socket, this.req.httpVersion);
  }

  get remoteAddress(): string {
    return this.req.socket.remoteAddress ?? '';
  }

  get encrypted(): boolean {
    return (this.req.socket as TLSSocket).encrypted === true;
  }

  get requestBody(): AsyncIterable<Buffer> {
    return this.req;
  }

  get carriesGrpc(): boolean {
    return false;
  }

  get headSent(): boolean {
    return this.headersSent;
  }

  get sentStatus(): number {
    return this.headersSent ? this.statusCode : 0;
  }

  get complete(): boolean {
    return this.writableFinished;
  }

  get gone(): boolean {
    return this.destroyed || this.writableEnded;
  }

  refusesHead(): ProxyErrorSpec | undefined {
    return undefined;
  }

  /** True when node will send this response chunked, given its head: only then can it carry trailers. */
  trailersAllowed(method: string, status: number, headers: readonly string[]): boolean {
    if (!this.useChunkedEncodingByDefault || method === 'HEAD' || status === 204 || status === 304 || status < 200) return false;
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i] as string;
      if (name.length === CONTENT_LENGTH.length && name.toLowerCase() === CONTENT_LENGTH) return false;
    }
    return true;
  }

  startResponse(status: number, headers: readonly string[]): void {
    this.writeHead(status, headers as string[]);
  }

  respondHeadOnly(status: number, headers: readonly string[]): void {
    this.writeHead(status, headers as string[]);
    this.end();
  }

  sendBody(chunk: Buffer): boolean {
    return this.write(chunk);
  }

  whenWritable(resume: () => void): void {
    this.once('drain', resume);
  }

  finishResponse(body?: Buffer, trailers?: TrailerPairs): void {
    if (trailers !== undefined) this.addTrailers(trailers as [string, string][]);
    this.end(body);
  }

  abortResponse(): void {
    this.destroy();
  }

  closeAfterResponse(): void {
    this.shouldKeepAlive = false;
  }

  discardUnreadBody(): void {
    this.req.socket?.destroy();
  }

  openTunnel(_status: number, _headers: readonly string[]): Duplex | undefined {
    return undefined; // an ordinary request on a keep-alive connection never becomes a tunnel
  }

  /** See `close-listeners.ts`. */
  closeListeners: ((exchange: DownstreamExchange) => void)[] | undefined = undefined;

  /** See `DownstreamExchange.owner`. */
  owner: unknown = undefined;

  onClose(listener: (exchange: DownstreamExchange) => void): void {
    addCloseListener<DownstreamExchange>(this, listener);
  }
}

/** An upgrade handshake or a CONNECT on the socket node's parser handed over (`'upgrade'` / `'connect'`). */
export class SocketExchange extends Http1Exchange {
  readonly #kind: 'upgrade' | 'connect';
  readonly #socket: Socket;
  #tunnelStatus = 0;
  /** The upgrade token the 101 names (set once the handshake is forwarded). */
  upgradeToken = '';

  constructor(req: IncomingMessage, socket: Socket, kind: 'upgrade' | 'connect') {
    super(req);
    this.#kind = kind;
    this.#socket = socket;
    this.shouldKeepAlive = false;
    this.assignSocket(socket);
    this.once('finish', () => socket.destroySoon()); // an answer that is not a tunnel: the socket serves nothing more
  }

  override get kind(): ExchangeKind {
    return this.#kind;
  }

  override get connectionInfo(): ConnectionInfo {
    return connectionInfo(this.#socket, this.req.httpVersion);
  }

  override get remoteAddress(): string {
    return this.#socket.remoteAddress ?? '';
  }

  override get encrypted(): boolean {
    return (this.#socket as TLSSocket).encrypted === true;
  }

  override get headSent(): boolean {
    return this.#tunnelStatus !== 0 || this.headersSent;
  }

  override get sentStatus(): number {
    return this.#tunnelStatus !== 0 ? this.#tunnelStatus : super.sentStatus;
  }

  override get complete(): boolean {
    return this.#tunnelStatus !== 0 || this.writableFinished;
  }

  override get gone(): boolean {
    return this.#socket.destroyed || (this.#tunnelStatus === 0 && super.gone);
  }

  override abortResponse(): void {
    if (this.#tunnelStatus === 0) this.destroy();
    else this.#socket.destroy();
  }

  /** Writes the 101 (or CONNECT's 200) on the raw socket and hands it over. */
  override openTunnel(status: number, headers: readonly string[]): Duplex | undefined {
    const socket = this.#socket;
    if (socket.destroyed || this.headersSent) return undefined;
    this.detachSocket(socket);
    const connect = this.#kind === 'connect';
    let head = `HTTP/1.1 ${status} ${connect ? 'Connection Established' : 'Switching Protocols'}\r\n`;
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
    head += connect ? '\r\n' : `Connection: Upgrade\r\nUpgrade: ${this.upgradeToken}\r\n\r\n`;
    socket.write(head, 'latin1');
    this.#tunnelStatus = status;
    return socket;
  }

  /** Over when the socket closes: after the answer, or once the tunnel is done with it. */
  override onClose(listener: (exchange: DownstreamExchange) => void): void {
    this.#socket.once('close', () => listener(this));
  }
}
