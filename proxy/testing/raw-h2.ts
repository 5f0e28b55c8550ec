/**
 * A raw HTTP/2 client for malformed-input tests: it writes frames exactly as asked (header blocks as HPACK
 * literals without indexing, so any name or value can be sent, pseudo-headers included; a block larger than the
 * default frame size goes on in CONTINUATION frames) and records every frame the server sends. Over plain TCP
 * (h2c with prior knowledge) or TLS (ALPN h2), with the client's SETTINGS as asked.
 */
import net from 'node:net';
import tls from 'node:tls';
import { HTTP2_PREFACE } from '../../lib/preface-sniff.js';

export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, CONTINUATION: 9 } as const;
/** SETTINGS identifiers (RFC 9113 §6.5.2). */
export const SETTING = { HEADER_TABLE_SIZE: 1, ENABLE_PUSH: 2, MAX_CONCURRENT_STREAMS: 3, INITIAL_WINDOW_SIZE: 4, MAX_FRAME_SIZE: 5 } as const;
/** The largest frame payload a peer accepts before it raises SETTINGS_MAX_FRAME_SIZE. */
const DEFAULT_MAX_FRAME = 16_384;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;
export const H2_ERROR = { NO_ERROR: 0, PROTOCOL_ERROR: 1, REFUSED_STREAM: 7, CANCEL: 8, ENHANCE_YOUR_CALM: 11 } as const;

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

function frameBytes(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

function hpackInt(value: number): Buffer {
  if (value < 127) return Buffer.from([value]);
  const out = [127];
  let rest = value - 127;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return Buffer.from(out);
}

/** A header block of literal fields without indexing (no Huffman coding). */
export function headerBlock(fields: readonly (readonly [string, string])[]): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    parts.push(Buffer.from([0]), hpackInt(Buffer.byteLength(name)), Buffer.from(name), hpackInt(Buffer.byteLength(value)), Buffer.from(value));
  }
  return Buffer.concat(parts);
}

export class RawH2 {
  readonly frames: Frame[] = [];
  closed = false;
  #buffer = Buffer.alloc(0);
  #waiters: (() => void)[] = [];

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
  }

  /**
   * Connects (`tls`: over TLS with ALPN h2, any certificate accepted, with `tlsOptions` such as a client
   * certificate), sends the preface and a SETTINGS frame (`settings`: its identifier/value pairs, none by default),
   * and acknowledges the server's SETTINGS.
   */
  static connect(
    address: string,
    opts: { readonly tls?: boolean; readonly settings?: readonly (readonly [number, number])[]; readonly tlsOptions?: tls.ConnectionOptions } = {},
  ): Promise<RawH2> {
    const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
    const settings = Buffer.alloc(6 * (opts.settings?.length ?? 0));
    (opts.settings ?? []).forEach(([id, value], i) => {
      settings.writeUInt16BE(id, 6 * i);
      settings.writeUInt32BE(value, 6 * i + 2);
    });
    return new Promise((resolve, reject) => {
      const start = (): void => {
        socket.off('error', reject);
        const c = new RawH2(socket);
        socket.write(Buffer.concat([HTTP2_PREFACE, frameBytes(FRAME.SETTINGS, 0, 0, settings)]));
        resolve(c);
      };
      const socket: net.Socket = opts.tls === true ? tls.connect({ host, port, ALPNProtocols: ['h2'], rejectUnauthorized: false, ...opts.tlsOptions }, start) : net.connect(port, host, start);
      socket.once('error', reject);
    });
  }

  send(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): void {
    if (!this.socket.destroyed) this.socket.write(frameBytes(type, flags, stream, payload));
  }

  headers(stream: number, fields: readonly (readonly [string, string])[], endStream = true): void {
    const block = headerBlock(fields);
    const end = endStream ? FLAG.END_STREAM : 0;
    if (block.length <= DEFAULT_MAX_FRAME) {
      this.send(FRAME.HEADERS, FLAG.END_HEADERS | end, stream, block);
      return;
    }
    for (let at = 0; at < block.length; at += DEFAULT_MAX_FRAME) {
      const last = at + DEFAULT_MAX_FRAME >= block.length ? FLAG.END_HEADERS : 0;
      this.send(at === 0 ? FRAME.HEADERS : FRAME.CONTINUATION, at === 0 ? end | last : last, stream, block.subarray(at, at + DEFAULT_MAX_FRAME));
    }
  }

  reset(stream: number, code: number = H2_ERROR.CANCEL): void {
    const p = Buffer.alloc(4);
    p.writeUInt32BE(code);
    this.send(FRAME.RST_STREAM, 0, stream, p);
  }

  /** Resolves with the first recorded frame matching, or undefined once the connection closed or `ms` passed. */
  async waitFor(match: (f: Frame) => boolean, ms = 5000): Promise<Frame | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.frames.find(match);
      if (hit !== undefined || this.closed || Date.now() >= deadline) return hit;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The error code of a RST_STREAM or GOAWAY frame. */
  static errorCode(f: Frame): number {
    return f.type === FRAME.GOAWAY ? f.payload.readUInt32BE(4) : f.payload.readUInt32BE(0);
  }

  close(): void {
    this.socket.destroy();
  }

  #read(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    while (this.#buffer.length >= 9) {
      const length = this.#buffer.readUIntBE(0, 3);
      if (this.#buffer.length < 9 + length) break;
      const f: Frame = { type: this.#buffer[3] as number, flags: this.#buffer[4] as number, stream: this.#buffer.readUInt32BE(5) & 0x7fffffff, payload: this.#buffer.subarray(9, 9 + length) };
      this.#buffer = this.#buffer.subarray(9 + length);
      if (f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0) this.send(FRAME.SETTINGS, FLAG.ACK, 0);
      this.frames.push(f);
    }
    this.#wake();
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }
}
