/**
 * Test helper: a downstream exchange that records what the chain and the response writer write to it, for unit
 * tests of the chain, the response phase and the filters (no socket). `close()` plays a client that goes away.
 */
import { PassThrough, type Duplex } from 'node:stream';
import type { ClientProtocol } from '../api/filter.js';
import type { ConnectionInfo, DownstreamExchange, ExchangeKind, TrailerPairs } from '../http/exchange.js';
import type { ProxyErrorSpec } from '../http/errors.js';

export class RecordingExchange implements DownstreamExchange {
  readonly kind: ExchangeKind = 'request';
  readonly protocol: ClientProtocol = 'http/1.1';
  readonly remoteAddress = '127.0.0.1';
  readonly encrypted = false;
  readonly carriesGrpc = false;
  readonly connectionInfo: ConnectionInfo = {
    remoteAddress: '127.0.0.1',
    remotePort: 50000,
    localAddress: '127.0.0.1',
    localPort: 8080,
    encrypted: false,
    httpVersion: '1.1',
    id: 1,
    serverName: undefined,
    tlsVersion: undefined,
  };
  readonly requestBody: AsyncIterable<Buffer> = new PassThrough();
  /** The head written, if any. */
  head: { readonly status: number; readonly headers: readonly string[] } | undefined;
  readonly chunks: Buffer[] = [];
  trailers: TrailerPairs | undefined;
  ended = false;
  aborted = false;
  keepAlive = true;
  #closed = false;
  readonly #listeners: ((exchange: DownstreamExchange) => void)[] = [];

  get headSent(): boolean {
    return this.head !== undefined;
  }

  get sentStatus(): number {
    return this.head?.status ?? 0;
  }

  get complete(): boolean {
    return this.ended && !this.aborted;
  }

  get gone(): boolean {
    return this.#closed || this.aborted || this.ended;
  }

  /** The body written so far, as text. */
  get body(): string {
    return Buffer.concat(this.chunks).toString();
  }

  /** A header of the head written (names compared in lower case). */
  header(name: string): string | undefined {
    const h = this.head?.headers ?? [];
    for (let i = 0; i < h.length; i += 2) if ((h[i] as string).toLowerCase() === name) return h[i + 1];
    return undefined;
  }

  refusesHead(): ProxyErrorSpec | undefined {
    return undefined;
  }

  trailersAllowed(): boolean {
    return true;
  }

  startResponse(status: number, headers: readonly string[]): void {
    if (this.head !== undefined) throw new Error('head written twice');
    this.head = { status, headers: [...headers] };
  }

  respondHeadOnly(status: number, headers: readonly string[]): void {
    this.startResponse(status, headers);
    this.finishResponse();
  }

  sendBody(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  whenWritable(resume: () => void): void {
    queueMicrotask(resume);
  }

  finishResponse(body?: Buffer, trailers?: TrailerPairs): void {
    if (body !== undefined) this.chunks.push(body);
    this.trailers = trailers;
    this.ended = true;
    this.#emitClose();
  }

  abortResponse(): void {
    this.aborted = true;
    this.#emitClose();
  }

  closeAfterResponse(): void {
    this.keepAlive = false;
  }

  discardUnreadBody(): void {}

  openTunnel(): Duplex | undefined {
    return undefined;
  }

  owner: unknown = undefined;

  onClose(listener: (exchange: DownstreamExchange) => void): void {
    if (this.#closed) listener(this);
    else this.#listeners.push(listener);
  }

  /** The client goes away. */
  close(): void {
    this.#emitClose();
  }

  #emitClose(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const l of this.#listeners.splice(0)) l(this);
  }
}
