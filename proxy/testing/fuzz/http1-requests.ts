/**
 * A strict incremental reader of the HTTP/1.1 requests a worker receives on one connection (what the proxy's
 * upstream client writes): request line, header lines, and a body by content-length or chunked. Anything else is a
 * problem the reader reports (the proxy must send well-formed requests). An upgrade request ends the reading: what
 * follows is the tunnel's.
 */

export interface ReadRequest {
  readonly method: string;
  readonly url: string;
  /** node's flat `[name, value, ...]`, names as sent. */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
  /** An upgrade (or CONNECT): the bytes after the head are not HTTP. */
  readonly upgrade: boolean;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.1$/;

export class RequestReader {
  #buf: Buffer = Buffer.alloc(0);
  #tunnel = false;
  problem: string | undefined;

  /** The requests completed by `chunk`. */
  push(chunk: Buffer): ReadRequest[] {
    if (this.#tunnel || this.problem !== undefined) return [];
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const out: ReadRequest[] = [];
    for (;;) {
      const r = this.#next();
      if (r === undefined) return out;
      out.push(r);
      if (r.upgrade) {
        this.#tunnel = true;
        return out;
      }
    }
  }

  #fail(why: string): undefined {
    this.problem = why;
    return undefined;
  }

  #next(): ReadRequest | undefined {
    const end = this.#buf.indexOf(HEAD_END);
    if (end === -1) return undefined;
    const lines = this.#buf.subarray(0, end).toString('latin1').split('\r\n');
    const m = REQUEST_LINE.exec(lines[0] as string);
    if (m === null) return this.#fail(`request line ${JSON.stringify(lines[0]?.slice(0, 80))}`);
    const raw: string[] = [];
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon);
      const value = line.slice(colon + 1).trim();
      if (colon <= 0 || !TOKEN.test(name) || /[\x00-\x08\x0a-\x1f\x7f]/.test(value)) return this.#fail(`header line ${JSON.stringify(line.slice(0, 80))}`);
      raw.push(name, value);
    }
    const values = (n: string): string[] => {
      const v: string[] = [];
      for (let i = 0; i < raw.length; i += 2) if ((raw[i] as string).toLowerCase() === n) v.push(raw[i + 1] as string);
      return v;
    };
    const upgrade = m[1] === 'CONNECT' || values('upgrade').length > 0;
    let at = end + HEAD_END.length;
    let body: Buffer = Buffer.alloc(0);
    const te = values('transfer-encoding');
    const cl = values('content-length');
    if (te.length > 0 && cl.length > 0) return this.#fail('both transfer-encoding and content-length');
    if (cl.length > 1) return this.#fail(`${cl.length} content-length fields`);
    if (te.length > 0) {
      if (te.join(',').toLowerCase().replace(/\s/g, '') !== 'chunked') return this.#fail(`transfer-encoding ${te.join(',')}`);
      const parts: Buffer[] = [];
      for (;;) {
        const eol = this.#buf.indexOf(CRLF, at);
        if (eol === -1) return undefined;
        const size = this.#buf.subarray(at, eol).toString('latin1').split(';')[0] as string;
        if (!/^[0-9A-Fa-f]{1,8}$/.test(size)) return this.#fail(`chunk size ${JSON.stringify(size)}`);
        const n = parseInt(size, 16);
        at = eol + 2;
        if (n === 0) break;
        if (this.#buf.length < at + n + 2) return undefined;
        parts.push(this.#buf.subarray(at, at + n));
        at += n + 2;
      }
      for (;;) {
        const eol = this.#buf.indexOf(CRLF, at);
        if (eol === -1) return undefined;
        const empty = eol === at;
        at = eol + 2;
        if (empty) break;
      }
      body = Buffer.concat(parts);
    } else if (cl.length === 1) {
      if (!/^\d{1,12}$/.test(cl[0] as string)) return this.#fail(`content-length ${JSON.stringify(cl[0])}`);
      const n = Number(cl[0]);
      if (this.#buf.length < at + n) return undefined;
      body = this.#buf.subarray(at, at + n);
      at += n;
    }
    this.#buf = this.#buf.subarray(at);
    return { method: m[1] as string, url: m[2] as string, rawHeaders: raw, body, upgrade };
  }
}
