/**
 * An HTTP/2 stream on the egress listener. A classic CONNECT (`:method CONNECT`, `:authority`, no `:path` or
 * `:scheme`: nghttp2 resets any other shape) is one tunnel; a connection carries as many as it has streams. The 200
 * leaves the stream open both ways: its DATA frames are the tunnel's bytes, END_STREAM its half-close, and a
 * destination that fails resets it with CONNECT_ERROR (RFC 9113 §8.5). Any other method gets its refusal on its
 * stream, the connection untouched.
 */
import http2, { type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { Departure } from './departure.js';
import type { AcceptedConnect, EgressConnection, EgressRequest } from './egress-request.js';

const { NGHTTP2_CONNECT_ERROR, NGHTTP2_INTERNAL_ERROR } = http2.constants;
const EMPTY = Buffer.alloc(0);

const headerText = (v: string | string[] | undefined): string => (Array.isArray(v) ? v.join(',') : (v ?? ''));

export class H2StreamRequest implements EgressRequest {
  readonly protocol = 'h2' as const;
  readonly method: string;
  readonly authority: string;
  readonly gone = new Departure();
  #answered = false;

  constructor(
    private readonly stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    readonly connection: EgressConnection,
  ) {
    this.method = headerText(headers[':method']);
    this.authority = headerText(headers[':authority'] ?? headers.host);
    stream.on('error', () => undefined); // a reset stream ends ('close' follows)
    stream.once('close', () => {
      if (!this.#answered) this.gone.leave();
    });
  }

  get answered(): boolean {
    return this.#answered;
  }

  #open(): boolean {
    return !this.stream.destroyed && !this.stream.closed && !this.stream.headersSent;
  }

  refuse(status: number, body: string, headers?: Readonly<Record<string, string>>): void {
    if (this.#answered) return;
    this.#answered = true;
    if (!this.#open()) return;
    const bytes = Buffer.from(body, 'utf8');
    this.stream.resume(); // what the client still sends is discarded
    const head = this.method === 'HEAD'; // its answer has no body
    this.stream.respond({ ...headers, ':status': status, 'content-type': 'text/plain; charset=utf-8', 'content-length': bytes.length }, { endStream: head });
    if (!head) this.stream.end(bytes);
  }

  accept(): AcceptedConnect | undefined {
    if (this.#answered) return undefined;
    this.#answered = true;
    if (!this.#open()) return undefined;
    const stream = this.stream;
    stream.respond({ ':status': 200 });
    return {
      stream,
      head: EMPTY,
      abort: () => {
        if (!stream.destroyed) stream.close(NGHTTP2_CONNECT_ERROR);
      },
    };
  }

  destroy(): void {
    if (!this.stream.destroyed) this.stream.close(NGHTTP2_INTERNAL_ERROR);
  }
}
