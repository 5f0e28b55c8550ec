/**
 * A strict reader of the first bytes of a TLS connection, the client's ClientHello, for its SNI (RFC 8446 §4.1.2,
 * §5.1; RFC 6066 §3). It reads:
 * - records: type 22 (handshake), version 3.1 to 3.3, length 1 to 2^14; the ClientHello may span any number of them
 *   (their fragments are joined), and no record of another type may come before it ends;
 * - the handshake header: type 1 (client_hello) and its 24-bit length;
 * - the ClientHello: legacy_version 3.1 to 3.3, random, session id (at most 32 bytes), cipher suites (an even
 *   length, at least 2), compression methods (at least 1), then either nothing (no extensions) or the extensions,
 *   which must fill the message exactly; no extension type twice;
 * - server_name (type 0): a list filling the extension exactly, of host_name entries (type 0) of 1 byte or more,
 *   printable ASCII (0x21-0x7e), at most one of them; a name type other than 0 is refused (its shape is unknown).
 * Bytes after the ClientHello are not read.
 *
 * Never throws; the answer for any bytes is one of `sni`, `no-sni`, `need-more`, `not-tls` (the first byte is not
 * 22, or the first record's version is not TLS) and `malformed`. It depends only on complete records, so it is the
 * same however the bytes were split, and once an answer other than `need-more` is given for some bytes, every longer
 * run of the same bytes gets it too. `need-more` says how many bytes, from the start, can change it (`needed`): the
 * answer is `need-more` for every length below that. Pure.
 */

export type ClientHelloResult =
  | { readonly kind: 'sni'; readonly name: string }
  | { readonly kind: 'no-sni' }
  | { readonly kind: 'need-more'; readonly needed: number }
  | { readonly kind: 'not-tls' }
  | { readonly kind: 'malformed'; readonly detail: string };

const HANDSHAKE = 22;
const CLIENT_HELLO = 1;
const MAX_FRAGMENT = 16384;
const SERVER_NAME = 0;
const HOST_NAME = 0;

const NOT_TLS: ClientHelloResult = Object.freeze({ kind: 'not-tls' });
const NO_SNI: ClientHelloResult = Object.freeze({ kind: 'no-sni' });
const needMore = (needed: number): ClientHelloResult => ({ kind: 'need-more', needed });
const malformed = (detail: string): ClientHelloResult => ({ kind: 'malformed', detail });

const tlsVersion = (major: number | undefined, minor: number | undefined): boolean => major === 3 && minor !== undefined && minor >= 1 && minor <= 3;

function joined(fragments: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const f of fragments) {
    const part = f.subarray(0, length - at);
    out.set(part, at);
    at += part.length;
    if (at === length) break;
  }
  return out;
}

export function parseClientHello(bytes: Uint8Array): ClientHelloResult {
  if (bytes.length === 0) return needMore(1);
  if (bytes[0] !== HANDSHAKE) return NOT_TLS;
  const fragments: Uint8Array[] = [];
  let have = 0;
  let total: number | undefined;
  for (let at = 0; ; ) {
    if (at + 5 > bytes.length) return needMore(at + 5);
    const type = bytes[at] as number;
    const length = ((bytes[at + 3] as number) << 8) | (bytes[at + 4] as number);
    if (!tlsVersion(bytes[at + 1], bytes[at + 2])) return at === 0 ? NOT_TLS : malformed('a record version other than TLS 1.0 to 1.2');
    if (type !== HANDSHAKE) return malformed(`a record of type ${type} before the ClientHello ended`);
    if (length === 0) return malformed('an empty handshake record');
    if (length > MAX_FRAGMENT) return malformed('a record longer than 16384 bytes');
    if (at + 5 + length > bytes.length) return needMore(at + 5 + length);
    fragments.push(bytes.subarray(at + 5, at + 5 + length));
    have += length;
    at += 5 + length;
    if (total === undefined && have >= 4) {
      const head = joined(fragments, 4);
      if (head[0] !== CLIENT_HELLO) return malformed(`a handshake message of type ${head[0]}, not a ClientHello`);
      total = 4 + (((head[1] as number) << 16) | ((head[2] as number) << 8) | (head[3] as number));
    }
    if (total !== undefined && have >= total) return helloOf(joined(fragments, total).subarray(4));
  }
}

/** Reads a ClientHello body; every read is bounds-checked (undefined past the end). */
class Reader {
  at = 0;
  constructor(private readonly b: Uint8Array) {}

  get left(): number {
    return this.b.length - this.at;
  }

  u8(): number | undefined {
    return this.at + 1 <= this.b.length ? (this.b[this.at++] as number) : undefined;
  }

  u16(): number | undefined {
    if (this.at + 2 > this.b.length) return undefined;
    const v = ((this.b[this.at] as number) << 8) | (this.b[this.at + 1] as number);
    this.at += 2;
    return v;
  }

  bytes(n: number): Uint8Array | undefined {
    if (this.at + n > this.b.length) return undefined;
    const v = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
}

function helloOf(body: Uint8Array): ClientHelloResult {
  const r = new Reader(body);
  const major = r.u8();
  const minor = r.u8();
  if (major === undefined || minor === undefined) return malformed('a ClientHello shorter than its version');
  if (!tlsVersion(major, minor)) return malformed('a ClientHello version other than TLS 1.0 to 1.2');
  if (r.bytes(32) === undefined) return malformed('a ClientHello shorter than its random');
  const sessionId = r.u8();
  if (sessionId === undefined || sessionId > 32 || r.bytes(sessionId) === undefined) return malformed('a bad session id');
  const suites = r.u16();
  if (suites === undefined || suites < 2 || suites % 2 !== 0 || r.bytes(suites) === undefined) return malformed('bad cipher suites');
  const compression = r.u8();
  if (compression === undefined || compression < 1 || r.bytes(compression) === undefined) return malformed('bad compression methods');
  if (r.left === 0) return NO_SNI;
  const extensionsLength = r.u16();
  if (extensionsLength === undefined || extensionsLength !== r.left) return malformed('extensions that do not fill the ClientHello');
  const seen = new Set<number>();
  let sni: ClientHelloResult = NO_SNI;
  while (r.left > 0) {
    const type = r.u16();
    const length = r.u16();
    const data = length === undefined ? undefined : r.bytes(length);
    if (type === undefined || data === undefined) return malformed('a truncated extension');
    if (seen.has(type)) return malformed(`extension ${type} twice`);
    seen.add(type);
    if (type === SERVER_NAME) sni = serverNameOf(data);
    if (sni.kind === 'malformed') return sni;
  }
  return sni;
}

/** The server_name extension's data: one host_name. */
function serverNameOf(data: Uint8Array): ClientHelloResult {
  const r = new Reader(data);
  const listLength = r.u16();
  if (listLength === undefined || listLength !== r.left || listLength === 0) return malformed('a server_name list that does not fill its extension');
  let name: string | undefined;
  while (r.left > 0) {
    const type = r.u8();
    const length = r.u16();
    const bytes = length === undefined ? undefined : r.bytes(length);
    if (type === undefined || bytes === undefined) return malformed('a truncated server_name entry');
    if (type !== HOST_NAME) return malformed(`a server_name of type ${type}`);
    if (name !== undefined) return malformed('two host_names');
    if (bytes.length === 0 || !bytes.every((c) => c >= 0x21 && c <= 0x7e)) return malformed('a host_name that is not printable ASCII');
    name = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
  }
  return name === undefined ? malformed('an empty server_name list') : { kind: 'sni', name };
}
