/**
 * A raw HTTP/1.1 client connection for end-to-end tests that must control the wire: pipelining several requests in
 * one write, closing at a chosen moment, and knowing whether the peer had closed before a request was written.
 * Responses are read in order; each must carry a content-length (every answer the proxy relays in these tests does).
 */
import net from 'node:net';

export interface RawResponse {
  readonly status: number;
  /** Lower-case names; the last value wins. */
  readonly headers: Readonly<Record<string, string>>;
  readonly bodyLength: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export class RawConnection {
  readonly #socket: net.Socket;
  #buffer: Buffer = Buffer.alloc(0);
  #waiters: { resolve: (r: RawResponse) => void; reject: (e: Error) => void }[] = [];
  #peerEnded = false;
  #closed = false;
  readonly closedPromise: Promise<void>;

  private constructor(socket: net.Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      this.#parse();
    });
    socket.on('end', () => {
      this.#peerEnded = true;
    });
    socket.on('error', () => undefined);
    this.closedPromise = new Promise((resolve) =>
      socket.once('close', () => {
        this.#closed = true;
        this.#peerEnded = true;
        for (const w of this.#waiters.splice(0)) w.reject(new Error('connection closed before a complete response'));
        resolve();
      }),
    );
  }

  /** Connects to `address` (`host:port`); rejects when the connection is refused. */
  static open(address: string): Promise<RawConnection> {
    const i = address.lastIndexOf(':');
    const socket = net.connect(Number(address.slice(i + 1)), address.slice(0, i));
    socket.setNoDelay(true);
    return new Promise((resolve, reject) => {
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  /** The peer closed its side (or the connection is gone): a request written now could not be answered. */
  get peerEnded(): boolean {
    return this.#peerEnded;
  }

  get closed(): boolean {
    return this.#closed;
  }

  write(data: string | Buffer): void {
    this.#socket.write(data);
  }

  /** The next complete response on this connection; rejects if the connection closes first. */
  nextResponse(): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      if (this.#closed) {
        reject(new Error('connection closed before a complete response'));
        return;
      }
      this.#waiters.push({ resolve, reject });
      this.#parse();
    });
  }

  destroy(): void {
    this.#socket.destroy();
  }

  #parse(): void {
    while (this.#waiters.length > 0) {
      const end = this.#buffer.indexOf(HEAD_END);
      if (end === -1) return;
      const lines = this.#buffer.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number((lines[0] ?? '').split(' ')[1]);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length']);
      if (!Number.isInteger(length)) throw new Error(`response without content-length: ${lines[0]}`);
      const total = end + HEAD_END.length + length;
      if (this.#buffer.length < total) return;
      this.#buffer = this.#buffer.subarray(total);
      this.#waiters.shift()?.resolve({ status, headers, bodyLength: length });
    }
  }
}

/** One request's bytes: `GET`-style when `body` is undefined. */
export function rawRequest(method: string, path: string, host: string, headers: Record<string, string> = {}, body?: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${host}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}
