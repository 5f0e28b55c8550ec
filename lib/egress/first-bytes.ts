/**
 * What the first bytes an actor sends through a tunnel name, for a verdict decided on the traffic: a TLS ClientHello
 * (first byte 22: client-hello.ts) gives its SNI, a cleartext HTTP/1.1 request (a method token first: http-host.ts)
 * its Host; anything else is an unknown protocol. `FirstBytesReader` gathers the bytes as they arrive, in chunks of
 * any size, up to a limit, and answers as soon as they decide: the same answer however the bytes were split, and the
 * same as `classifyFirstBytes` on the first `maxBytes` of them all (`too-large` when those do not decide). Pure.
 */
import { parseClientHello } from './client-hello.js';
import { parseHttpHost } from './http-host.js';

const TLS_HANDSHAKE = 22;

export type FirstBytes =
  | { readonly kind: 'sni'; readonly name: string }
  | { readonly kind: 'host'; readonly name: string }
  | { readonly kind: 'no-sni' }
  | { readonly kind: 'need-more'; readonly needed: number }
  | { readonly kind: 'unknown-protocol' }
  | { readonly kind: 'malformed'; readonly protocol: 'tls' | 'http'; readonly detail: string };

const UNKNOWN: FirstBytes = Object.freeze({ kind: 'unknown-protocol' });

export function classifyFirstBytes(bytes: Uint8Array): FirstBytes {
  if (bytes.length === 0) return { kind: 'need-more', needed: 1 };
  if (bytes[0] === TLS_HANDSHAKE) {
    const tls = parseClientHello(bytes);
    switch (tls.kind) {
      case 'not-tls':
        return UNKNOWN;
      case 'malformed':
        return { kind: 'malformed', protocol: 'tls', detail: tls.detail };
      default:
        return tls;
    }
  }
  const http = parseHttpHost(bytes);
  switch (http.kind) {
    case 'not-http':
      return UNKNOWN;
    case 'malformed':
      return { kind: 'malformed', protocol: 'http', detail: http.detail };
    default:
      return http;
  }
}

/** A reader's answer: the bytes decided, or cannot within the limit (`too-large`), or need more. */
export type FirstBytesAnswer = Exclude<FirstBytes, { kind: 'need-more' }> | { readonly kind: 'too-large' } | { readonly kind: 'need-more' };

export class FirstBytesReader {
  readonly #chunks: Buffer[] = [];
  #length = 0;
  /** Bytes needed before the answer can change. */
  #needed = 1;
  #answer: FirstBytesAnswer = { kind: 'need-more' };

  constructor(readonly maxBytes: number) {
    if (!Number.isInteger(maxBytes) || maxBytes < 1) throw new RangeError('maxBytes must be a positive integer');
  }

  /** Every byte pushed so far, in order (what a tunnel must forward first). */
  bytes(): Buffer {
    return this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#length);
  }

  get length(): number {
    return this.#length;
  }

  get answer(): FirstBytesAnswer {
    return this.#answer;
  }

  /** Adds `chunk`; the answer, which no longer changes once it is not `need-more`. */
  push(chunk: Buffer): FirstBytesAnswer {
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#length += chunk.length;
    }
    if (this.#answer.kind !== 'need-more' || this.#length < this.#needed) return this.#answer;
    const all = this.bytes();
    if (this.#chunks.length > 1) this.#chunks.splice(0, this.#chunks.length, all);
    const seen = classifyFirstBytes(all.subarray(0, Math.min(all.length, this.maxBytes)));
    if (seen.kind !== 'need-more') this.#answer = seen;
    else if (seen.needed > this.maxBytes) this.#answer = { kind: 'too-large' };
    else this.#needed = seen.needed;
    return this.#answer;
  }
}
