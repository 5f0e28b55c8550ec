/**
 * Test helper: a WebSocket over HTTP/2 (RFC 8441) with node's http2 client — an extended CONNECT stream, and the
 * WebSocket framing written by hand (masked text frames out; unmasked text frames in, up to 64 KiB).
 */
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { Echo } from './ws-client.js';

export interface H2Handshake {
  readonly status: number;
  readonly headers: http2.IncomingHttpHeaders;
  readonly stream: ClientHttp2Stream;
}

/** Connects with prior knowledge (h2c) and waits for the server's SETTINGS (ENABLE_CONNECT_PROTOCOL). */
export async function connectH2(ingress: string): Promise<ClientHttp2Session> {
  const session = http2.connect(ingress);
  session.on('error', () => undefined);
  await once(session, 'remoteSettings');
  return session;
}

/** Sends the extended CONNECT for `:protocol` to `path` on `authority`; resolves with the answer's head. */
export async function extendedConnect(session: ClientHttp2Session, authority: string, protocol = 'websocket', version = '13'): Promise<H2Handshake> {
  const stream = session.request(
    { ':method': 'CONNECT', ':protocol': protocol, ':scheme': 'http', ':path': '/ws', ':authority': authority, 'sec-websocket-version': version },
    { endStream: false },
  );
  stream.on('error', () => undefined);
  const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
  return { status: Number(headers[':status']), headers, stream };
}

/** One masked text frame (client to server, RFC 6455 §5.2). */
export function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  if (payload.length > 0xffff) throw new Error('frame too large for the helper');
  const extended = payload.length > 125;
  const head = Buffer.alloc(extended ? 4 : 2);
  head[0] = 0x81;
  head[1] = 0x80 | (extended ? 126 : payload.length);
  if (extended) head.writeUInt16BE(payload.length, 2);
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
  return Buffer.concat([head, mask, masked]);
}

/** Reads the server's unmasked text frames from `stream` as echo answers, in order. */
export class FrameReader {
  #buffer = Buffer.alloc(0);
  readonly #waiting: ((e: Echo) => void)[] = [];
  readonly #received: Echo[] = [];

  constructor(stream: ClientHttp2Stream) {
    stream.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#parse();
    });
  }

  next(): Promise<Echo> {
    const ready = this.#received.shift();
    return ready !== undefined ? Promise.resolve(ready) : new Promise((resolve) => this.#waiting.push(resolve));
  }

  #parse(): void {
    for (;;) {
      const b = this.#buffer;
      if (b.length < 2) return;
      let length = (b[1] as number) & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (b.length < 4) return;
        length = b.readUInt16BE(2);
        offset = 4;
      }
      if (b.length < offset + length) return;
      const opcode = (b[0] as number) & 0x0f;
      const payload = b.subarray(offset, offset + length);
      this.#buffer = b.subarray(offset + length);
      if (opcode !== 1) continue;
      const echo = JSON.parse(payload.toString()) as Echo;
      const w = this.#waiting.shift();
      if (w !== undefined) w(echo);
      else this.#received.push(echo);
    }
  }
}
