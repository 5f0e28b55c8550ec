/**
 * Reads what the server needs from a ProcessingRequest straight from its protobuf encoding: which `request` member
 * is set, for request headers the `:authority` value (else `host`), and the two egress attributes of
 * lib/egress/wire.ts when the message carries them. Envoy sends every request header in that message (often more
 * than a kilobyte), and building a JS object for each header only to read one of them was the largest per-request
 * cost in the server's own code. Field numbers are those of envoy.service.ext_proc.v3 (see proto/envoy/...) and
 * google.protobuf.Struct; unknown fields are skipped, as any protobuf decoder does. Malformed input throws WireError,
 * and nothing else.
 */
import { DIRECTION_ATTRIBUTE, SOURCE_CERTIFICATE_ATTRIBUTE } from '../lib/egress/wire.js';


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
  /**
   * For request headers: the egress attributes under `envoy.filters.http.ext_proc` (lib/egress/wire.ts); undefined
   * when the message carries neither (ingress data planes send no attributes by default).
   */
  readonly attributes: EgressAttributes | undefined;
}

/** The attributes extproc's egress mode reads, each undefined when absent or not of its type. */
export interface EgressAttributes {
  /** `xds.listener_direction`, a number (2: OUTBOUND). */
  readonly direction: number | undefined;
  /** `source.certificate`, a string (the actor's leaf certificate, PEM). */
  readonly certificate: string | undefined;
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
/** The key Envoy's ext_proc filter files the attributes it sends under. */
export const EXT_PROC_ATTRIBUTES_KEY = 'envoy.filters.http.ext_proc';
const ATTRIBUTES_KEY = Buffer.from(EXT_PROC_ATTRIBUTES_KEY, 'latin1');
const DIRECTION = Buffer.from(DIRECTION_ATTRIBUTE, 'latin1');
const CERTIFICATE = Buffer.from(SOURCE_CERTIFICATE_ATTRIBUTE, 'latin1');

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

  /** A fixed64 read as a little-endian double. */
  double(): number {
    const at = this.pos;
    if (at + 8 > this.end) throw new WireError('truncated field');
    this.pos = at + 8;
    return this.buf.readDoubleLE(at);
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

interface Attributes {
  direction: number | undefined;
  certificate: string | undefined;
}

/** google.protobuf.Value: 2 number_value (double), 3 string_value; the last `kind` member on the wire wins. */
function readValue(buf: Buffer, start: number, end: number): number | string | undefined {
  const r = new Reader(buf, start, end);
  let value: number | string | undefined;
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field === 2 && wire === 1) value = r.double();
    else if (field === 3 && wire === 2) {
      const [s, e] = r.bytes();
      value = buf.toString('utf8', s, e);
    } else {
      r.skip(wire);
      if (field >= 1 && field <= 6) value = undefined; // another member of the oneof
    }
  }
  return value;
}

/** A map entry (1 key, 2 value): the key's and the value's [start, end), -1 when absent. */
function readEntry(buf: Buffer, start: number, end: number): [number, number, number, number] {
  const r = new Reader(buf, start, end);
  let keyStart = -1;
  let keyEnd = -1;
  let valueStart = -1;
  let valueEnd = -1;
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) [keyStart, keyEnd] = r.bytes();
    else if (tag === ((2 << 3) | 2)) [valueStart, valueEnd] = r.bytes();
    else r.skip(tag & 7);
  }
  return [keyStart, keyEnd, valueStart, valueEnd];
}

/** google.protobuf.Struct: 1 map<string, Value> fields; reads the two egress attributes (a later entry wins). */
function readAttributeStruct(buf: Buffer, start: number, end: number, into: Attributes): void {
  const r = new Reader(buf, start, end);
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag !== ((1 << 3) | 2)) {
      r.skip(tag & 7);
      continue;
    }
    const [s, e] = r.bytes();
    const [keyStart, keyEnd, valueStart, valueEnd] = readEntry(buf, s, e);
    const direction = equalsAt(buf, keyStart, keyEnd, DIRECTION);
    if (!direction && !equalsAt(buf, keyStart, keyEnd, CERTIFICATE)) continue;
    const value = valueStart < 0 ? undefined : readValue(buf, valueStart, valueEnd);
    if (direction) into.direction = typeof value === 'number' ? value : undefined;
    else into.certificate = typeof value === 'string' ? value : undefined;
  }
}

/** One entry of ProcessingRequest.attributes (map<string, Struct>): only `envoy.filters.http.ext_proc` is read. */
function readAttributesEntry(buf: Buffer, start: number, end: number, attributes: Attributes | undefined): Attributes | undefined {
  const [keyStart, keyEnd, valueStart, valueEnd] = readEntry(buf, start, end);
  if (!equalsAt(buf, keyStart, keyEnd, ATTRIBUTES_KEY)) return attributes;
  // A later entry for the same key replaces the earlier one, as in any protobuf map.
  const into: Attributes = { direction: undefined, certificate: undefined };
  if (valueStart >= 0) readAttributeStruct(buf, valueStart, valueEnd, into);
  return into;
}

/** ProcessingRequest field 9: `map<string, google.protobuf.Struct> attributes`. */
const ATTRIBUTES_TAG = (9 << 3) | 2;

/** Summarises an encoded ProcessingRequest. Throws WireError on malformed input. */
export function summariseProcessingRequest(buf: Buffer): RequestSummary {
  const r = new Reader(buf, 0, buf.length);
  let request: RequestKind | undefined;
  let found: Found | undefined;
  let attributes: Attributes | undefined;
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
    } else if (tag === ATTRIBUTES_TAG) {
      const [s, e] = r.bytes();
      attributes = readAttributesEntry(buf, s, e, attributes);
    } else {
      r.skip(wire);
    }
  }
  if (request !== 'request_headers') return { request, authority: '', attributes: undefined };
  const read = attributes === undefined || (attributes.direction === undefined && attributes.certificate === undefined) ? undefined : attributes;
  return { request, authority: found?.authority ?? found?.host ?? '', attributes: read };
}
