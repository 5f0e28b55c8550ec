/**
 * A strict reader of the HTTP/1.1 responses a client received on one connection (RFC 9112): status lines, header
 * lines, and each body framed as the response says (no body for HEAD, 1xx, 204 and 304; chunked; content-length;
 * else up to the close). It reads the bytes after all of them were received and says what is wrong with them, if
 * anything, so a property can require "exactly one well-formed answer per request, or a close".
 */

export interface Http1Answer {
  readonly status: number;
  /** Lower-case names, in order. */
  readonly headers: readonly (readonly [string, string])[];
  /** Interim (1xx) statuses before it. */
  readonly interim: readonly number[];
  readonly bodyLength: number;
  /** Trailer fields of a chunked body. */
  readonly trailers: readonly (readonly [string, string])[];
}

export interface Http1Reading {
  /** Complete answers, in order. */
  readonly answers: Http1Answer[];
  /** Something that is no valid HTTP/1.1 response (or more answers than requests): a finding. */
  readonly problem: string | undefined;
  /** The bytes after the last complete answer begin one that is not complete (the connection ended inside it). */
  readonly partial: boolean;
  /** The last answer turned the connection into a tunnel (101, or 2xx to CONNECT): what follows is not HTTP. */
  readonly tunnel: boolean;
}

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3}) [\t\x20-\x7e\x80-\xff]*$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

class Malformed extends Error {}
class NeedMore extends Error {}

interface Head {
  readonly status: number;
  readonly headers: [string, string][];
  readonly end: number;
}

function readHead(buf: Buffer, at: number): Head {
  const end = buf.indexOf(HEAD_END, at);
  if (end === -1) throw new NeedMore();
  const lines = buf.subarray(at, end).toString('latin1').split('\r\n');
  const m = STATUS_LINE.exec(lines[0] as string);
  if (m === null) throw new Malformed(`status line ${JSON.stringify(lines[0]?.slice(0, 80))}`);
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (colon <= 0 || !TOKEN.test(name)) throw new Malformed(`header line ${JSON.stringify(line.slice(0, 80))}`);
    if (!FIELD_VALUE.test(value)) throw new Malformed(`value of ${name}: ${JSON.stringify(value.slice(0, 80))}`);
    headers.push([name.toLowerCase(), value]);
  }
  return { status: Number(m[1]), headers, end: end + HEAD_END.length };
}

/** Reads a chunked body from `at`; returns where it ends and its length and trailers. */
function readChunked(buf: Buffer, at: number): { end: number; length: number; trailers: [string, string][] } {
  let pos = at;
  let length = 0;
  for (;;) {
    const eol = buf.indexOf(CRLF, pos);
    if (eol === -1) throw new NeedMore();
    const sizeText = buf.subarray(pos, eol).toString('latin1').split(';')[0]?.trim() ?? '';
    if (!/^[0-9A-Fa-f]{1,12}$/.test(sizeText)) throw new Malformed(`chunk size ${JSON.stringify(sizeText.slice(0, 40))}`);
    const size = parseInt(sizeText, 16);
    pos = eol + 2;
    if (size === 0) break;
    if (buf.length < pos + size + 2) throw new NeedMore();
    if (!buf.subarray(pos + size, pos + size + 2).equals(CRLF)) throw new Malformed('chunk data not followed by CRLF');
    length += size;
    pos += size + 2;
  }
  const trailers: [string, string][] = [];
  for (;;) {
    const eol = buf.indexOf(CRLF, pos);
    if (eol === -1) throw new NeedMore();
    const line = buf.subarray(pos, eol).toString('latin1');
    pos = eol + 2;
    if (line === '') return { end: pos, length, trailers };
    const colon = line.indexOf(':');
    if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) throw new Malformed(`trailer line ${JSON.stringify(line.slice(0, 80))}`);
    trailers.push([line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]);
  }
}

function values(headers: readonly (readonly [string, string])[], name: string): string[] {
  return headers.filter(([n]) => n === name).map(([, v]) => v);
}

/**
 * Reads `bytes` as the answers to requests with `methods` (in order). `closed`: the connection ended, so a body
 * delimited by the close is complete.
 */
export function readAnswers(bytes: Buffer, methods: readonly string[], closed: boolean): Http1Reading {
  const answers: Http1Answer[] = [];
  let at = 0;
  let interim: number[] = [];
  const reading = (problem: string | undefined, partial: boolean, tunnel = false): Http1Reading => ({ answers, problem, partial, tunnel });
  try {
    while (at < bytes.length) {
      const method = methods[answers.length];
      if (method === undefined) return reading(`${bytes.length - at} byte(s) after the answer to every request: ${JSON.stringify(bytes.subarray(at, at + 60).toString('latin1'))}`, false);
      const head = readHead(bytes, at);
      at = head.end;
      const { status, headers } = head;
      if (status < 100 || status > 599) return reading(`status ${status}`, false);
      if (status === 101 || (method === 'CONNECT' && status >= 200 && status < 300)) {
        answers.push({ status, headers, interim, bodyLength: 0, trailers: [] });
        return reading(undefined, false, true);
      }
      if (status < 200) {
        if (values(headers, 'content-length').length > 0 || values(headers, 'transfer-encoding').length > 0) return reading(`interim ${status} with framing headers`, false);
        interim.push(status);
        continue;
      }
      const te = values(headers, 'transfer-encoding');
      const cl = values(headers, 'content-length');
      if (te.length > 0 && cl.length > 0) return reading('both transfer-encoding and content-length', false);
      if (cl.length > 1) return reading(`${cl.length} content-length fields`, false);
      const noBody = method === 'HEAD' || status === 204 || status === 304;
      let bodyLength = 0;
      let trailers: [string, string][] = [];
      if (noBody) {
        if (te.length > 0 && status === 204) return reading('transfer-encoding on a 204', false);
      } else if (te.length > 0) {
        if (te.join(',').split(',').map((t) => t.trim().toLowerCase()).at(-1) !== 'chunked') return reading(`transfer-encoding ${te.join(',')} (not ending in chunked)`, false);
        const chunked = readChunked(bytes, at);
        at = chunked.end;
        bodyLength = chunked.length;
        trailers = chunked.trailers;
      } else if (cl.length === 1) {
        if (!/^\d{1,15}$/.test(cl[0] as string)) return reading(`content-length ${JSON.stringify(cl[0])}`, false);
        bodyLength = Number(cl[0]);
        if (bytes.length < at + bodyLength) throw new NeedMore();
        at += bodyLength;
      } else {
        if (!closed) throw new NeedMore();
        bodyLength = bytes.length - at;
        at = bytes.length;
      }
      answers.push({ status, headers, interim, bodyLength, trailers });
      interim = [];
    }
    return reading(undefined, interim.length > 0);
  } catch (err) {
    if (err instanceof NeedMore) return reading(undefined, true);
    if (err instanceof Malformed) return reading(err.message, false);
    throw err;
  }
}
