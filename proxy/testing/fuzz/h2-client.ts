/**
 * One fuzz connection over HTTP/2 (h2c with prior knowledge, or TLS with ALPN h2): each generated stream goes out
 * through node's http2 client when asked and node accepts its header block, else as raw frames (`raw-h2.ts`) on a
 * connection of their own. Waits, up to a deadline, until every stream was answered (END_STREAM, a reset, or a
 * final status on a CONNECT, whose stream then carries a tunnel) or its connection ended, and reports each
 * stream's outcome and what was wrong with it.
 */
import http2 from 'node:http2';
import { validateHeaderValue } from 'node:http';
import { expand, type H2Stream } from './arbitraries.js';
import { FRAME, RawH2, SETTING } from '../raw-h2.js';
import { readStreams } from './h2-answers.js';

export interface H2StreamOutcome {
  readonly id: string;
  readonly via: 'node' | 'raw';
  readonly status: number | undefined;
  /** The final answer's header fields (node's client only). */
  readonly headers?: Readonly<http2.IncomingHttpHeaders>;
  /** The body bytes received (node's client only). */
  readonly bodyLength?: number;
  /** Answered, reset, or its connection ended. */
  readonly done: boolean;
  readonly problem: string | undefined;
}

export interface H2Send {
  readonly address: string;
  readonly tls: boolean;
  readonly via: 'node' | 'raw';
  /** Each stream with the request id it carries (`x-request-id`, after the generated fields). */
  readonly streams: readonly (H2Stream & { readonly id: string })[];
  readonly deadlineMs: number;
  /** With `tls`: a client certificate to present (the egress listener's actors). */
  readonly clientCertificate?: { readonly cert: string; readonly key: string } | undefined;
}

type Outgoing = H2Send['streams'][number];

const isConnect = (s: H2Stream): boolean => s.fields.some(([n, v]) => n === ':method' && v === 'CONNECT');
const fieldsOf = (s: Outgoing): [string, string][] => [...s.fields.map(([n, v]): [string, string] => [n, expand(v)]), ['x-request-id', s.id]];

const NODE_NAME = /^:?[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Whether node's client would send the field (else it fails the whole session, later). */
function nodeSends(name: string, value: string): boolean {
  if (!NODE_NAME.test(name)) return false;
  try {
    validateHeaderValue('x', value);
    return true;
  } catch {
    return false;
  }
}

/** node's header object for the block (repeated names as arrays), or undefined when node would not send it. */
function nodeHeaders(s: Outgoing): http2.OutgoingHttpHeaders | undefined {
  const out: Record<string, string | string[]> = {};
  for (const [n, v] of fieldsOf(s)) {
    if (!nodeSends(n, v)) return undefined;
    const had = out[n];
    out[n] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
  }
  return out;
}

async function viaNode(send: H2Send, streams: readonly Outgoing[], refused: Outgoing[]): Promise<H2StreamOutcome[]> {
  const session = http2.connect(`${send.tls ? 'https' : 'http'}://${send.address}`, { rejectUnauthorized: false, ...send.clientCertificate });
  session.on('error', () => undefined);
  const out: H2StreamOutcome[] = [];
  const waits: Promise<void>[] = [];
  for (const s of streams) {
    let req: http2.ClientHttp2Stream;
    try {
      const headers = nodeHeaders(s);
      if (headers === undefined) throw new Error('not sent by node');
      req = session.request(headers, { endStream: s.body === undefined });
    } catch {
      refused.push(s);
      continue;
    }
    const o = { id: s.id, via: 'node' as const, status: undefined as number | undefined, headers: undefined as http2.IncomingHttpHeaders | undefined, bodyLength: 0, done: false, problem: undefined as string | undefined };
    out.push(o);
    req.on('error', () => undefined);
    waits.push(
      new Promise<void>((resolve) => {
        req.on('response', (h) => {
          const status = Number(h[':status']);
          o.status = status;
          o.headers = h;
          if (!(status >= 100 && status <= 599)) o.problem = `:status ${String(h[':status'])}`;
          if (h['x-ate-assignment-stale'] !== undefined) o.problem = 'the answer carries x-ate-assignment-stale';
          if (isConnect(s) && status >= 200 && status < 300) {
            o.done = true;
            resolve();
          }
        });
        req.on('trailers', (h) => {
          if (h['x-ate-assignment-stale'] !== undefined) o.problem = 'the trailers carry x-ate-assignment-stale';
        });
        req.on('data', (c: Buffer) => (o.bodyLength += c.length));
        const end = (): void => {
          o.done = true;
          resolve();
        };
        req.on('close', end);
        session.once('close', end); // a stream of a session that ends may never close itself

      }),
    );
    if (s.body !== undefined) req.end(s.body);
  }
  const timer = new Promise<void>((resolve) => setTimeout(resolve, send.deadlineMs).unref());
  await Promise.race([Promise.all(waits), timer]);
  session.destroy();
  return out;
}

async function viaRaw(send: H2Send, streams: readonly Outgoing[]): Promise<H2StreamOutcome[]> {
  if (streams.length === 0) return [];
  const c = await RawH2.connect(send.address, { tls: send.tls, settings: [[SETTING.HEADER_TABLE_SIZE, 0]], ...(send.clientCertificate === undefined ? {} : { tlsOptions: send.clientCertificate }) });
  const ids = streams.map((_, i) => 1 + 2 * i);
  try {
    streams.forEach((s, i) => {
      const id = ids[i] as number;
      c.headers(id, fieldsOf(s), s.body === undefined);
      if (s.body !== undefined) c.send(FRAME.DATA, 0x1, id, Buffer.from(s.body));
    });
    // A GOAWAY ends the streams above its last stream id; one with an error code ends the connection, which the
    // proxy closes then (the streams below wait for that close).
    const goawayBelow = (id: number): boolean => c.frames.some((f) => f.type === FRAME.GOAWAY && (f.payload.readUInt32BE(0) & 0x7fffffff) < id);
    const allDone = (): boolean => {
      if (c.closed) return true;
      const read = readStreams(c.frames);
      return streams.every((s, i) => {
        const id = ids[i] as number;
        const a = read.get(id);
        if (goawayBelow(id)) return true;
        return a !== undefined && (a.reset !== undefined || a.ended || (isConnect(s) && a.statuses.some((x) => x !== undefined && x >= 200 && x < 300)));
      });
    };
    await c.waitFor(() => allDone(), send.deadlineMs);
    const read = readStreams(c.frames);
    return streams.map((s, i) => {
      const id = ids[i] as number;
      const a = read.get(id);
      const final = a?.statuses.find((x) => x !== undefined && x >= 200);
      return { id: s.id, via: 'raw' as const, status: final, done: c.closed || allDone(), problem: a?.problem };
    });
  } finally {
    c.close();
  }
}

export async function sendH2(send: H2Send): Promise<H2StreamOutcome[]> {
  const refused: Outgoing[] = [];
  const viaNodeOut = send.via === 'node' ? await viaNode(send, send.streams, refused) : [];
  const raw = send.via === 'node' ? refused : send.streams;
  return [...viaNodeOut, ...(await viaRaw(send, raw))];
}
