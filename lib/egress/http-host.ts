/**
 * A strict reader of the first bytes of a cleartext HTTP/1.1 connection, the head of its first request, for the host
 * it names (RFC 9112 §3, §5; RFC 9110 §7.2). It reads:
 * - the method: 1 to 16 token characters, then a space (anything else is `not-http`);
 * - the request line, once complete: method, target (printable, no space), `HTTP/1.1` or `HTTP/1.0`, CRLF;
 * - the header lines up to the empty line: `name: value`, no space before the colon, no folded line, no control
 *   character but tab in a value; exactly one `Host`, whose value is a host (a name or a bracketed IP literal) and an
 *   optional `:port`; the port is stripped;
 * - a target in absolute form (`http://host/...`), or a CONNECT's authority, must name the same host as `Host` (a
 *   server routes by the target, so a different one would be a different destination).
 * Later requests on the connection are not read.
 *
 * Never throws; the answer for any bytes is one of `host`, `need-more`, `not-http` and `malformed`; once it is not
 * `need-more` for some bytes it is the same for every longer run of them, and `need-more` says how many bytes, from
 * the start, can change it. Pure.
 */
import { asciiLower } from './hostname-pattern.js';

export type HttpHostResult =
  | { readonly kind: 'host'; readonly name: string }
  | { readonly kind: 'need-more'; readonly needed: number }
  | { readonly kind: 'not-http' }
  | { readonly kind: 'malformed'; readonly detail: string };

const MAX_METHOD = 16;
const SP = 0x20;
const NOT_HTTP: HttpHostResult = Object.freeze({ kind: 'not-http' });
const malformed = (detail: string): HttpHostResult => ({ kind: 'malformed', detail });

/** RFC 9110 tchar. */
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const isTchar = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c));
const REG_NAME = /^[A-Za-z0-9\-._~!$&'()*+,;=%]+$/;
const IP_LITERAL = /^\[[0-9A-Za-z:.]+\]$/;
const PORT = /^[0-9]*$/;
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/** The host of a `Host` value or an authority, without its port; undefined when it is neither a name nor an IP literal. */
export function hostOfAuthority(value: string): string | undefined {
  let host = value;
  let port = '';
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    if (close === -1) return undefined;
    host = value.slice(0, close + 1);
    const rest = value.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) return undefined;
    port = rest.slice(1);
    if (!IP_LITERAL.test(host)) return undefined;
  } else {
    const colon = value.lastIndexOf(':');
    if (colon !== -1) {
      host = value.slice(0, colon);
      port = value.slice(colon + 1);
    }
    if (!REG_NAME.test(host)) return undefined;
  }
  return PORT.test(port) ? host : undefined;
}

export function parseHttpHost(bytes: Uint8Array): HttpHostResult {
  let method = 0;
  while (method < bytes.length && isTchar(bytes[method] as number)) method++;
  if (method > MAX_METHOD) return NOT_HTTP;
  if (method === bytes.length) return { kind: 'need-more', needed: bytes.length + 1 };
  if (method === 0 || bytes[method] !== SP) return NOT_HTTP;

  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const lineEnd = buf.indexOf('\r\n', 0, 'latin1');
  const requestLine = lineEnd === -1 ? undefined : requestTargetOf(buf.toString('latin1', 0, lineEnd));
  if (typeof requestLine === 'string') return malformed(requestLine);
  const headEnd = buf.indexOf(HEAD_END);
  if (headEnd === -1 || requestLine === undefined) return { kind: 'need-more', needed: bytes.length + 1 };

  const lines = buf.toString('latin1', lineEnd + 2, headEnd + 2).split('\r\n').slice(0, -1);
  let host: string | undefined;
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon === -1 ? '' : line.slice(0, colon);
    if (!TCHAR.test(name)) return malformed(line.startsWith(' ') || line.startsWith('\t') ? 'a folded header line' : 'a header line that is not name: value');
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) return malformed('a control character in a header value');
    if (asciiLower(name) !== 'host') continue;
    if (host !== undefined) return malformed('two Host headers');
    host = value;
  }
  if (host === undefined) return malformed('no Host header');
  const name = hostOfAuthority(host);
  if (name === undefined) return malformed('a Host that is not host[:port]');
  if (requestLine.authority !== undefined && asciiLower(hostOfAuthority(requestLine.authority) ?? '') !== asciiLower(name)) return malformed('a request target naming another host than Host');
  return { kind: 'host', name };
}

/** The request line's authority (absolute form, or a CONNECT's), or why the line is refused. */
function requestTargetOf(line: string): { readonly authority: string | undefined } | string {
  const parts = line.split(' ');
  if (parts.length !== 3) return 'a request line that is not method, target and version';
  const [method, target, version] = parts as [string, string, string];
  if (!/^HTTP\/1\.[01]$/.test(version)) return 'a version other than HTTP/1.1 or HTTP/1.0';
  if (target.length === 0 || !/^[\x21-\x7e]+$/.test(target)) return 'a request target that is not printable';
  if (method === 'CONNECT') return { authority: target };
  return { authority: ABSOLUTE.exec(target)?.[1] };
}
