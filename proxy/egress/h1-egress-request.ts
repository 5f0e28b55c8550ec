/**
 * An HTTP/1.1 request on the egress listener: a CONNECT (node's `connect` event hands over the socket and the bytes
 * read past its head), or any other method (answered through node's response, 405). Every answer but the 200 closes
 * the connection: on HTTP/1.1 a connection carries one CONNECT.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Departure } from './departure.js';
import type { AcceptedConnect, EgressConnection, EgressRequest } from './egress-request.js';

const TEXT = 'text/plain; charset=utf-8';

function headerLines(headers: Readonly<Record<string, string>> | undefined): string {
  let out = '';
  for (const [k, v] of Object.entries(headers ?? {})) out += `${k}: ${v}\r\n`;
  return out;
}

/** Bytes an actor may send past its CONNECT head before the answer; beyond them the connection is not read until then. */
const EARLY_BYTES = 64 * 1024;

/**
 * `CONNECT <authority> HTTP/1.1`, with the connection's socket. Until the answer the connection is read (bytes sent
 * early are kept for the tunnel, up to `EARLY_BYTES`) so that an actor that goes away is noticed: its end, or its
 * connection failing, before the answer cancels the CONNECT.
 */
export class H1ConnectRequest implements EgressRequest {
  readonly protocol = 'http/1.1' as const;
  readonly method = 'CONNECT';
  readonly authority: string;
  readonly gone = new Departure();
  #answered = false;
  readonly #early: Buffer[] = [];
  #earlyBytes = 0;
  readonly #onData = (chunk: Buffer): void => {
    this.#early.push(chunk);
    this.#earlyBytes += chunk.length;
    if (this.#earlyBytes >= EARLY_BYTES) this.socket.pause();
  };
  readonly #onGone = (): void => {
    if (!this.#answered) this.gone.leave();
  };

  constructor(
    req: IncomingMessage,
    private readonly socket: Socket,
    head: Buffer,
    readonly connection: EgressConnection,
  ) {
    this.authority = req.url ?? '';
    if (head.length > 0) this.#onData(head);
    // A socket error is followed by 'close'.
    socket.on('error', () => undefined);
    socket.once('close', this.#onGone);
    socket.once('end', this.#onGone);
    socket.on('data', this.#onData);
  }

  get answered(): boolean {
    return this.#answered;
  }

  refuse(status: number, body: string, headers?: Readonly<Record<string, string>>): void {
    if (this.#answered) return;
    this.#answered = true;
    const socket = this.socket;
    if (socket.destroyed) return;
    const bytes = Buffer.from(body, 'utf8');
    const head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: ${TEXT}\r\ncontent-length: ${bytes.length}\r\n${headerLines(headers)}connection: close\r\n\r\n`;
    socket.end(Buffer.concat([Buffer.from(head, 'latin1'), bytes]), () => socket.destroy());
  }

  accept(): AcceptedConnect | undefined {
    if (this.#answered) return undefined;
    this.#answered = true;
    const socket = this.socket;
    if (socket.destroyed) return undefined;
    socket.off('data', this.#onData);
    socket.off('end', this.#onGone);
    socket.pause(); // the tunnel reads on from here
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    return { stream: socket, head: Buffer.concat(this.#early), abort: () => socket.destroy() };
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Any other method: answered through node's response, the connection closed after it. */
export class H1OtherRequest implements EgressRequest {
  readonly protocol = 'http/1.1' as const;
  readonly method: string;
  readonly authority: string;
  readonly gone = new Departure();

  constructor(
    req: IncomingMessage,
    private readonly res: ServerResponse,
    readonly connection: EgressConnection,
  ) {
    this.method = req.method ?? '';
    this.authority = req.url ?? '';
    req.resume(); // a body is not read, only discarded
    res.once('close', () => {
      if (!res.headersSent) this.gone.leave();
    });
  }

  get answered(): boolean {
    return this.res.headersSent;
  }

  refuse(status: number, body: string, headers?: Readonly<Record<string, string>>): void {
    const res = this.res;
    if (res.headersSent || res.destroyed) return;
    const bytes = Buffer.from(body, 'utf8');
    res.writeHead(status, { ...headers, 'content-type': TEXT, 'content-length': String(bytes.length), connection: 'close' });
    res.end(bytes);
  }

  accept(): AcceptedConnect | undefined {
    return undefined;
  }

  destroy(): void {
    this.res.destroy();
  }
}
