/**
 * One worker's HTTP/2 session for gRPC, on node's own HTTP/2 client, answering the same handler callbacks the
 * router gives undici (`onConnect`, `onHeaders`, `onData`, `onComplete`, `onError`, `onRequestSent`): calls run
 * concurrently, one stream each, whatever their bodies. (undici's HTTP/2 client starts a request with a streaming
 * body, or one that is not idempotent, only when no other is in flight on the session: every gRPC call to a worker
 * would wait for the one before it.)
 *
 * The session is opened on first use — with prior knowledge (h2c), or over the mTLS connector offering ALPN `h2`
 * (`tls.ts`, the same verification as the HTTP/1.1 pools) — and opened again after it closed. A call's response
 * headers must arrive within the route timeout counted from the dispatch, so a call waiting for the session, or
 * for a stream slot the worker's SETTINGS_MAX_CONCURRENT_STREAMS holds back, has its deadline too. A call that fails
 * before its stream exists (the session could not be opened) is a connect failure, as on the HTTP/1.1 path.
 */
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import type { Socket } from 'node:net';
import type { buildConnector, Dispatcher } from 'undici';
import type { UpstreamDispatcher } from './pools.js';

/** Streams the proxy opens on one worker's session at most (the worker's own SETTINGS lower it). */
export const H2_MAX_STREAMS = 100;

export interface H2DispatcherOptions {
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  /** Idle time between response body chunks before the call is abandoned. */
  readonly bodyTimeoutMs: number;
  /** Opens the TLS connection (mTLS); absent: h2c with prior knowledge. */
  readonly connector?: buildConnector.connector;
}

const { NGHTTP2_CANCEL } = http2.constants;

/** The router's handler: undici's callbacks, and `onRequestSent` once the whole request is written. */
type CallHandler = Dispatcher.DispatchHandler & { onRequestSent?(): void };

function coded(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

export class H2SessionDispatcher implements UpstreamDispatcher {
  #session: ClientHttp2Session | undefined;
  /** Calls waiting for the session being opened. */
  #waiting: ((session: ClientHttp2Session | Error) => void)[] | undefined;
  #closed = false;

  constructor(
    private readonly address: string,
    private readonly opts: H2DispatcherOptions,
  ) {}

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    new H2Call(options, handler, this.opts, this.opts.connector === undefined ? 'http' : 'https').start((ready) => this.#withSession(ready));
    return true;
  }

  /** Hands `ready` the open session (opening one when there is none), or the reason there is none. */
  #withSession(ready: (session: ClientHttp2Session | Error) => void): void {
    const current = this.#session;
    if (current !== undefined && !current.closed && !current.destroyed) return ready(current);
    if (this.#closed) return ready(coded('the worker\'s HTTP/2 session is closed', 'UND_ERR_CLOSED'));
    if (this.#waiting !== undefined) {
      this.#waiting.push(ready);
      return;
    }
    this.#waiting = [ready];
    this.#open((result) => {
      const waiting = this.#waiting ?? [];
      this.#waiting = undefined;
      if (!(result instanceof Error)) this.#session = result;
      for (const w of waiting) w(result);
    });
  }

  #open(done: (session: ClientHttp2Session | Error) => void): void {
    const { connector, connectTimeoutMs } = this.opts;
    const colon = this.address.lastIndexOf(':');
    const hostname = this.address.slice(0, colon);
    const port = this.address.slice(colon + 1);
    const begin = (socket: Socket | undefined, authority: string): void => {
      const session = http2.connect(authority, {
        ...(socket === undefined ? {} : { createConnection: () => socket }),
        settings: { enablePush: false },
        peerMaxConcurrentStreams: H2_MAX_STREAMS,
      });
      let settled = false;
      const settle = (result: ClientHttp2Session | Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        done(result);
      };
      const timer = setTimeout(() => {
        const err = coded('upstream HTTP/2 connect timeout', 'UND_ERR_CONNECT_TIMEOUT');
        session.destroy(err);
        settle(err);
      }, connectTimeoutMs);
      session.once('connect', () => settle(session));
      // A GOAWAY from the worker: the streams open on it finish; new calls open a new session.
      session.once('goaway', () => {
        if (this.#session === session) this.#session = undefined;
      });
      session.on('error', (err: Error) => settle(err)); // before connect: the connect failed; after: its streams fail
      session.once('close', () => {
        settle(coded('upstream HTTP/2 session closed before it was ready', 'ECONNRESET'));
        if (this.#session === session) this.#session = undefined;
      });
      session.unref();
    };
    if (connector === undefined) return begin(undefined, `http://${this.address}`);
    connector({ hostname, host: hostname, port, protocol: 'https:', servername: '' } as buildConnector.Options, (err, socket) => {
      if (err !== null) return done(err);
      begin(socket as Socket, `https://${this.address}`);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const session = this.#session;
    this.#session = undefined;
    if (session === undefined || session.closed) return;
    await new Promise<void>((resolve) => session.close(resolve));
  }

  async destroy(): Promise<void> {
    this.#closed = true;
    this.#session?.destroy();
    this.#session = undefined;
  }
}

/** One gRPC call: its stream, its body pump, its deadline, and the handler it answers. */
class H2Call {
  #stream: ClientHttp2Stream | undefined;
  #ended = false;
  #headed = false;
  #trailers: IncomingHttpHeaders | undefined;
  readonly #deadline: NodeJS.Timeout;

  constructor(
    private readonly options: Dispatcher.DispatchOptions,
    private readonly handler: CallHandler,
    private readonly opts: H2DispatcherOptions,
    private readonly scheme: 'http' | 'https',
  ) {
    const timeoutMs = (options.headersTimeout as number | undefined) ?? opts.headersTimeoutMs;
    this.#deadline = setTimeout(() => this.#fail(coded('no upstream response headers in time', 'UND_ERR_HEADERS_TIMEOUT')), timeoutMs);
  }

  start(withSession: (ready: (session: ClientHttp2Session | Error) => void) => void): void {
    withSession((session) => {
      if (this.#ended) return;
      if (session instanceof Error) return this.#fail(session);
      this.#open(session);
    });
  }

  #open(session: ClientHttp2Session): void {
    const body = this.options.body as Buffer | AsyncIterable<Buffer> | null | undefined;
    const empty = body === null || body === undefined || (Buffer.isBuffer(body) && body.length === 0);
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(requestHeaders(this.options, this.scheme), { endStream: empty });
    } catch (err) {
      return this.#fail(err as Error);
    }
    this.#stream = stream;
    this.handler.onConnect?.((err?: Error) => this.#fail(err ?? coded('aborted', 'UND_ERR_ABORTED')));
    if (this.#ended) return;
    stream.on('response', (headers) => this.#response(headers));
    stream.on('data', (chunk: Buffer) => {
      if (this.handler.onData?.(chunk) === false) stream.pause();
    });
    stream.on('trailers', (trailers) => (this.#trailers = trailers));
    stream.once('end', () => this.#complete());
    stream.on('error', (err: Error) => this.#fail(err));
    stream.once('close', () => {
      if (!this.#ended) this.#fail(coded(`upstream HTTP/2 stream closed (code ${stream.rstCode ?? 0})`, 'UND_ERR_SOCKET'));
    });
    if (empty) this.handler.onRequestSent?.();
    else if (Buffer.isBuffer(body)) {
      stream.end(body, () => this.handler.onRequestSent?.());
    } else void this.#pump(stream, body as AsyncIterable<Buffer>);
  }

  /** Sends a streaming body with backpressure both ways (a client's stream reads only as fast as the worker takes it). */
  async #pump(stream: ClientHttp2Stream, body: AsyncIterable<Buffer>): Promise<void> {
    try {
      for await (const chunk of body) {
        if (this.#ended || stream.destroyed) return;
        if (!stream.write(chunk)) await new Promise<void>((resolve) => {
          const go = (): void => {
            stream.off('close', go);
            stream.off('drain', go);
            resolve();
          };
          stream.once('drain', go);
          stream.once('close', go);
        });
      }
      if (this.#ended || stream.destroyed) return;
      stream.end(() => this.handler.onRequestSent?.());
    } catch (err) {
      this.#fail(err as Error);
    }
  }

  #response(headers: IncomingHttpHeaders): void {
    const status = Number(headers[':status']);
    if (status < 200) return;
    clearTimeout(this.#deadline);
    this.#headed = true;
    const stream = this.#stream as ClientHttp2Stream;
    stream.setTimeout(this.opts.bodyTimeoutMs, () => this.#fail(coded('upstream body timeout', 'UND_ERR_BODY_TIMEOUT')));
    const flowing = this.handler.onHeaders?.(status, rawHeaders(headers), () => stream.resume(), '');
    if (flowing === false) stream.pause();
  }

  #complete(): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#deadline);
    this.#stream?.setTimeout(0);
    if (!this.#headed) return void this.handler.onError?.(coded('upstream HTTP/2 stream ended without a response', 'UND_ERR_SOCKET'));
    this.handler.onComplete?.(withoutPseudo(this.#trailers) as unknown as string[] | null);
  }

  #fail(err: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#deadline);
    const stream = this.#stream;
    if (stream !== undefined && !stream.destroyed) {
      stream.setTimeout(0);
      stream.close(NGHTTP2_CANCEL);
    }
    this.handler.onError?.(err);
  }
}

/** The request head as HTTP/2 headers: the pseudo-headers from the request line and Host, then the rest. */
function requestHeaders(options: Dispatcher.DispatchOptions, scheme: 'http' | 'https'): OutgoingHttpHeaders {
  const list = (options.headers ?? []) as string[];
  const out: OutgoingHttpHeaders = { ':method': options.method, ':path': options.path, ':scheme': scheme };
  for (let i = 0; i < list.length; i += 2) {
    const name = list[i] as string;
    const value = list[i + 1] as string;
    if (name === 'host') {
      out[':authority'] = value;
      continue;
    }
    const prev = out[name];
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev as string, value];
  }
  return out;
}

/** Response headers as undici reports them: a flat list of name and value buffers, without pseudo-headers. */
function rawHeaders(headers: IncomingHttpHeaders): Buffer[] {
  const raw: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (name.charCodeAt(0) === 58 /* ':' */ || value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) raw.push(Buffer.from(name, 'latin1'), Buffer.from(v, 'latin1'));
    else raw.push(Buffer.from(name, 'latin1'), Buffer.from(String(value), 'latin1'));
  }
  return raw;
}

function withoutPseudo(trailers: IncomingHttpHeaders | undefined): Record<string, string | string[]> | null {
  if (trailers === undefined) return null;
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(trailers)) {
    if (name.charCodeAt(0) === 58 || value === undefined) continue;
    out[name] = value;
  }
  return out;
}
