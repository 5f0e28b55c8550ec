/**
 * Reads the two things the server needs from a ProcessingRequest straight from its protobuf encoding: which
 * `request` member is set, and (for request headers) the `:authority` value, else `host`. Envoy sends every request
 * header in that message (often more than a kilobyte), and building a JS object for each header only to read one
 * of them was the largest per-request cost in the server's own code. Field numbers are those of
 * envoy.service.ext_proc.v3 (see proto/envoy/...); unknown fields are skipped, as any protobuf decoder does.
 */

/** The ProcessingRequest `request` oneof members. */
export type RequestKind =
  | 'request_headers'
  | 'response_headers'
  | 'request_body'
  | 'response_body'
  | 'request_trailers'
  | 'response_trailers';

/** What the server reads from one ProcessingRequest. */
export interface RequestSummary {
  /** The `request` oneof member set (the last one on the wire wins), or undefined when none is. */
  readonly request: RequestKind | undefined;
  /** For request headers: `:authority` (else `host`) from `raw_value`, falling back to `value`; '' when absent. */
  readonly authority: string;
}

/** ProcessingRequest field number → oneof member. */
const KINDS: readonly (RequestKind | undefined)[] = [
  undefined,
  undefined,
  'request_headers',
  'response_headers',
  'request_body',
  'response_body',
  'request_trailers',
  'response_trailers',
];

const AUTHORITY = Buffer.from(':authority', 'latin1');

export class WireError extends Error {
  override readonly name = 'WireError';
}

class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  /** A varint as a JS number (exact up to 2^53, which covers every tag and length). */
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 128;
    }
    throw new WireError('varint too long');
  }

  /** Returns the [start, end) of a length-delimited field's payload and moves past it. */
  bytes(): [number, number] {
    const len = this.varint();
    const start = this.pos;
    const end = start + len;
    if (end > this.end) throw new WireError('truncated field');
    this.pos = end;
    return [start, end];
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.bytes();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        throw new WireError(`unsupported wire type ${wireType}`);
    }
    if (this.pos > this.end) throw new WireError('truncated field');
  }
}

function equalsAt(buf: Buffer, start: number, end: number, literal: Buffer): boolean {
  if (end - start !== literal.length) return false;
  for (let i = 0; i < literal.length; i++) if (buf[start + i] !== literal[i]) return false;
  return true;
}

/** `host`, ASCII case-insensitively. */
function isHost(buf: Buffer, start: number, end: number): boolean {
  return (
    end - start === 4 &&
    (buf[start]! | 0x20) === 0x68 &&
    (buf[start + 1]! | 0x20) === 0x6f &&
    (buf[start + 2]! | 0x20) === 0x73 &&
    (buf[start + 3]! | 0x20) === 0x74
  );
}

interface Found {
  authority: string | undefined;
  host: string | undefined;
}

/** HeaderValue: 1 key, 2 value, 3 raw_value. */
function readHeaderValue(buf: Buffer, start: number, end: number, found: Found): void {
  const r = new Reader(buf, start, end);
  let keyStart = -1;
  let keyEnd = -1;
  let valueStart = -1;
  let valueEnd = -1;
  let rawStart = -1;
  let rawEnd = -1;
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (wire === 2 && field >= 1 && field <= 3) {
      const [s, e] = r.bytes();
      if (field === 1) [keyStart, keyEnd] = [s, e];
      else if (field === 2) [valueStart, valueEnd] = [s, e];
      else [rawStart, rawEnd] = [s, e];
    } else {
      r.skip(wire);
    }
  }
  if (keyStart < 0) return;
  const authority = equalsAt(buf, keyStart, keyEnd, AUTHORITY);
  if (!authority && (found.host !== undefined || !isHost(buf, keyStart, keyEnd))) return;
  const value = rawEnd > rawStart ? buf.toString('utf8', rawStart, rawEnd) : valueStart >= 0 ? buf.toString('utf8', valueStart, valueEnd) : '';
  if (authority) found.authority ??= value;
  else found.host = value;
}

/** HttpHeaders: 1 headers (HeaderMap: 1 repeated HeaderValue). */
function readHttpHeaders(buf: Buffer, start: number, end: number, found: Found): void {
  const r = new Reader(buf, start, end);
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) {
      const [ms, me] = r.bytes();
      const map = new Reader(buf, ms, me);
      while (map.pos < map.end) {
        const t = map.varint();
        if (t === ((1 << 3) | 2)) {
          const [hs, he] = map.bytes();
          readHeaderValue(buf, hs, he, found);
        } else {
          map.skip(t & 7);
        }
      }
    } else {
      r.skip(tag & 7);
    }
  }
}

/** Summarises an encoded ProcessingRequest. Throws WireError on malformed input. */
export function summariseProcessingRequest(buf: Buffer): RequestSummary {
  const r = new Reader(buf, 0, buf.length);
  let request: RequestKind | undefined;
  let found: Found | undefined;
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    const kind = field < KINDS.length ? KINDS[field] : undefined;
    if (kind !== undefined && wire === 2) {
      const [s, e] = r.bytes();
      if (kind !== request) found = undefined; // a different member replaces the previous one
      request = kind;
      if (kind === 'request_headers') readHttpHeaders(buf, s, e, (found ??= { authority: undefined, host: undefined }));
    } else {
      r.skip(wire);
    }
  }
  return { request, authority: request === 'request_headers' ? (found?.authority ?? found?.host ?? '') : '' };
}
