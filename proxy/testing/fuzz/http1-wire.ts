/**
 * A generated HTTP/1.1 request (`arbitraries.ts`) as the bytes a client writes, and what a reader of those bytes can
 * know about them before sending: whether node's parser has the whole request once they arrived (`complete`), needs
 * bytes that never come (`incomplete`), or may read them either way (`ambiguous`: conflicting framings, bare LF,
 * odd versions), and whether a conforming client could have sent it (`wellFormed`: it must be answered).
 *
 * Every request carries `x-request-id: <id>` as its first field, so what a worker received is matched to it.
 */
import { expand, STANDARD_METHODS, type Field, type Framing, type Http1Request } from './arbitraries.js';

export interface Http1Wire {
  readonly id: string;
  readonly method: string;
  /**
   * The methods of the requests a conforming parser reads in `bytes`, in order: `method`, then any request its body
   * framing leaves after it (a `long-body` whose extra bytes are a whole request: the server may answer it too).
   */
  readonly methods: readonly string[];
  readonly bytes: Buffer;
  readonly completeness: 'complete' | 'incomplete' | 'ambiguous';
  readonly wellFormed: boolean;
  /** `PRI ` on a plaintext port starts HTTP/2's preface: the proxy reads the connection as HTTP/2. */
  readonly prefaceLike: boolean;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const CLEAN_VALUE = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$|^$/;
const CLEAN_TARGET = /^(\/|http:\/\/)[\x21-\x7e]*$/;
/** Heads up to this size are read whole by the proxy (its limit is 60 KiB). */
const SAFE_HEAD_BYTES = 56 * 1024;

function chunk(s: string, extensions: boolean): string {
  return `${Buffer.byteLength(s).toString(16)}${extensions ? ';ext=1' : ''}\r\n${s}\r\n`;
}

/** A whole request line and head with no body (`GET / HTTP/1.1\r\n\r\n`): its method, else undefined. */
function wholeRequestMethod(bytes: string): string | undefined {
  return /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) \S+ HTTP\/1\.[01]\r\n(?:[^\r\n]+\r\n)*\r\n$/.exec(bytes)?.[1];
}

function framed(f: Framing): { fields: Field[]; body: string; state: Http1Wire['completeness']; embedded?: string[] } {
  const te = (v: string): Field => ({ name: 'Transfer-Encoding', value: v });
  const cl = (n: number): Field => ({ name: 'Content-Length', value: String(n) });
  const len = (s: string): number => Buffer.byteLength(s);
  switch (f.kind) {
    case 'none':
      return { fields: [], body: '', state: 'complete' };
    case 'length':
      return { fields: [cl(len(f.body))], body: f.body, state: 'complete' };
    case 'chunked': {
      const trailers = f.trailers.map((t) => `${t.name}: ${expand(t.value)}\r\n`).join('');
      return { fields: [te('chunked')], body: `${f.chunks.map((c) => chunk(c, f.extensions)).join('')}0\r\n${trailers}\r\n`, state: 'complete' };
    }
    case 'short-body':
      return { fields: [cl(len(f.body) + f.missing)], body: f.body, state: 'incomplete' };
    case 'long-body': {
      const embedded = wholeRequestMethod(f.extra);
      return { fields: [cl(len(f.body))], body: f.body + f.extra, state: 'ambiguous', embedded: embedded === undefined ? [] : [embedded] };
    }
    case 'length-and-chunked':
      return { fields: [cl(len(f.body)), te('chunked')], body: `${f.body === '' ? '' : chunk(f.body, false)}0\r\n\r\n`, state: 'ambiguous' };
    case 'two-lengths':
      return { fields: [cl(len(f.body)), cl(f.other)], body: f.body, state: 'ambiguous' };
    case 'truncated-chunked':
      return { fields: [te('chunked')], body: f.chunks.map((c) => chunk(c, false)).join(''), state: 'incomplete' };
    case 'bad-chunk-size':
      return { fields: [te('chunked')], body: `${f.size}\r\nabc\r\n0\r\n\r\n`, state: 'ambiguous' };
    case 'other-coding':
      return { fields: [te(f.coding)], body: f.body, state: 'ambiguous' };
  }
}

export function http1Wire(req: Http1Request, id: string, tls: boolean): Http1Wire {
  const { head } = req;
  const fields: Field[] = [{ name: 'x-request-id', value: id }];
  if (head.host !== 'none') fields.push({ name: 'Host', value: head.authority });
  fields.push(...head.fields);
  if (head.host === 'two') fields.push({ name: 'Host', value: head.second });
  if (head.hop.length > 0) {
    fields.push({ name: 'Connection', value: head.hop.join(', ') });
    for (const h of head.hop) fields.push({ name: h, value: 'hop-value' });
  }
  const body = framed(req.framing);
  fields.push(...body.fields);
  const target = expand(req.target);
  const line = req.version === '' ? `${req.method} ${target}` : `${req.method} ${target} ${req.version}`;
  const headText = `${line}${req.eol}${fields.map((f) => `${f.name}: ${expand(f.value)}${req.eol}`).join('')}${req.eol}`;
  const bytes = Buffer.from(headText + body.body, 'utf8');
  const readable = (req.version === 'HTTP/1.1' || req.version === 'HTTP/1.0') && req.eol === '\r\n' && TOKEN.test(req.method) && !/[\s]/.test(target) && target !== '';
  const completeness = readable ? body.state : body.state === 'incomplete' ? 'incomplete' : 'ambiguous';
  const cleanFields = fields.every((f) => TOKEN.test(f.name) && CLEAN_VALUE.test(expand(f.value)));
  const wellFormed =
    completeness === 'complete' &&
    req.version === 'HTTP/1.1' &&
    STANDARD_METHODS.has(req.method) &&
    CLEAN_TARGET.test(target) &&
    cleanFields &&
    Buffer.byteLength(headText) < SAFE_HEAD_BYTES &&
    (req.framing.kind === 'none' || req.framing.kind === 'length' || req.framing.kind === 'chunked');
  const methods = [req.method, ...(readable ? (body.embedded ?? []) : [])];
  return { id, method: req.method, methods, bytes, completeness, wellFormed, prefaceLike: !tls && headText.startsWith('PRI ') };
}
