/**
 * A generated worker answer (`arbitraries.ts`) as the bytes the scripted worker writes, and what is known about it
 * before the proxy reads it: `clean` (a whole, well-formed final answer the proxy must relay with its status and
 * body), `stale` (a readable head of `421` + `x-ate-assignment-stale: true`: the proxy must ask again, never relay
 * it), and whether the worker closes its connection after it.
 */
import { expand, type Field, type WorkerAnswer } from './arbitraries.js';
import type { WorkerReply } from './scripted-worker.js';

export interface WorkerWire extends WorkerReply {
  readonly clean: boolean;
  /**
   * A field HTTP/2 carries once (RFC 9110 §5.3: a sender must not repeat it) is repeated: a client on HTTP/2 gets the
   * proxy's 502 (node's HTTP/2 refuses such a head), a client on HTTP/1.1 the answer as it came.
   */
  readonly repeatsSingleField: boolean;
  readonly stale: boolean;
  readonly status: number;
  /** Body bytes a client of a clean answer receives (0 for HEAD, 204, 304). */
  readonly bodyLength: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** The fields the generated answers may repeat that node's HTTP/2 sends only once (its list is longer). */
const SINGLE_FIELDS = new Set(['content-type', 'content-length', 'location', 'etag', 'last-modified', 'age', 'expires', 'date']);
const CLEAN_VALUE = /^[\x20-\x7e]{0,200}$/;

function chunked(body: string, trailers: readonly Field[]): string {
  const data = body === '' ? '' : `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n`;
  return `${data}0\r\n${trailers.map((t) => `${t.name}: ${expand(t.value)}\r\n`).join('')}\r\n`;
}

export function workerWire(a: WorkerAnswer, method: string): WorkerWire {
  const noBody = method === 'HEAD' || a.status === 204 || a.status === 304 || (a.status >= 100 && a.status < 200);
  const body = noBody ? '' : a.body;
  const n = Buffer.byteLength(a.body);
  const fields: string[] = a.fields.map((f) => `${f.name}: ${expand(f.value)}`);
  let payload = body;
  switch (a.framing) {
    case 'length':
      fields.push(`content-length: ${n}`);
      break;
    case 'chunked':
      fields.push('transfer-encoding: chunked');
      payload = noBody ? '' : chunked(body, a.trailers);
      break;
    case 'close-delimited':
      break;
    case 'short-length':
      fields.push(`content-length: ${n + 10}`);
      break;
    case 'long-length':
      fields.push(`content-length: ${Math.max(0, n - 3)}`);
      break;
    case 'length-and-chunked':
      fields.push(`content-length: ${n}`, 'transfer-encoding: chunked');
      payload = noBody ? '' : chunked(body, []);
      break;
    case 'two-lengths':
      fields.push(`content-length: ${n}`, `content-length: ${n + 1}`);
      break;
    case 'bad-chunk':
      fields.push('transfer-encoding: chunked');
      payload = noBody ? '' : `zz\r\n${body}\r\n0\r\n\r\n`;
      break;
  }
  const interim = a.interim.map((s) => `HTTP/1.1 ${s} Interim\r\n\r\n`).join('');
  const head = `${a.version} ${a.status} ${a.reason}\r\n${fields.map((f) => `${f}\r\n`).join('')}\r\n`;
  const bytes = Buffer.from(interim + head + payload, 'utf8');
  const headEnd = Buffer.byteLength(interim + head);
  const cutAt = a.cut === undefined ? undefined : Math.floor(a.cut * bytes.length);
  const fieldsClean = a.fields.every((f) => TOKEN.test(f.name) && CLEAN_VALUE.test(expand(f.value)));
  const wellFramed = a.framing === 'length' || a.framing === 'chunked';
  const asksClose = a.fields.some((f) => f.name.toLowerCase() === 'connection' && /close|upgrade/i.test(expand(f.value)));
  const final = a.status >= 200 && a.status <= 599;
  const close = !(a.keepAlive && wellFramed && cutAt === undefined && a.version === 'HTTP/1.1' && final && !asksClose);
  const clean =
    a.interim.length === 0 &&
    a.version === 'HTTP/1.1' &&
    final &&
    a.status !== 421 &&
    /^[A-Za-z ]*$/.test(a.reason) &&
    fieldsClean &&
    !a.fields.some((f) => f.name.toLowerCase() === 'connection' && /upgrade/i.test(expand(f.value))) &&
    a.trailers.every((t) => t.name === 'x-worker-trailer' || t.name === 'grpc-status') &&
    wellFramed &&
    cutAt === undefined &&
    // A 204, 205 or 304 only with an empty body and no Transfer-Encoding: none may carry content (RFC 9110 §15.3.5,
    // §15.3.6, §15.4.5), and undici, the proxy's upstream client, refuses a 304 whose Content-Length is not 0.
    ((a.status !== 204 && a.status !== 205 && a.status !== 304) || (a.framing === 'length' && a.body === ''));
  const stale =
    a.status === 421 &&
    a.version === 'HTTP/1.1' &&
    a.interim.length === 0 &&
    /^[A-Za-z ]*$/.test(a.reason) &&
    fieldsClean &&
    a.fields.some((f) => f.name.toLowerCase() === 'x-ate-assignment-stale' && expand(f.value).toLowerCase() === 'true') &&
    // A head the upstream client reads (it refuses one with both framings, or two lengths, as malformed).
    (a.framing === 'length' || a.framing === 'chunked' || a.framing === 'close-delimited') &&
    (cutAt === undefined || cutAt >= headEnd);
  const names = a.fields.map((f) => f.name.toLowerCase()).filter((n) => SINGLE_FIELDS.has(n));
  const repeatsSingleField = new Set(names).size < names.length;
  return { bytes, cutAt, close, clean, repeatsSingleField, stale, status: a.status, bodyLength: Buffer.byteLength(body) };
}
