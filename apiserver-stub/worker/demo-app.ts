/**
 * The demo app every actor runs: any method and path, a JSON answer naming the actor, the worker, the request
 * and its body. Query knobs for tests and benchmarks: `delay_ms` (answer later), `bytes` (pad the answer to this
 * size), `sse=N` (N server-sent events 100 ms apart, each flushed as written), `echo_headers=1` (include the
 * request headers the app received). With `x-demo-forge-stale: 1` the app answers 421 with
 * X-Ate-Assignment-Stale: true, which the worker must never let out.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AppReply } from './tunnel-reply.js';

export const SSE_INTERVAL_MS = 100;
const MAX_DELAY_MS = 600_000;
const MAX_BYTES = 64 * 1024 * 1024;
const MAX_SSE = 10_000;
const EMPTY_SHA256 = createHash('sha256').digest('hex');
const JSON_HEADERS = 'application/json';

export interface DemoContext {
  readonly atespace: string;
  readonly actor: string;
  readonly worker: string;
  readonly seq: number;
  readonly requestId: string | null;
}

interface Knobs {
  delayMs: number;
  bytes: number;
  sse: number;
  echoHeaders: boolean;
}

const NO_KNOBS: Knobs = Object.freeze({ delayMs: 0, bytes: 0, sse: 0, echoHeaders: false });

function intParam(params: URLSearchParams, name: string, max: number): number {
  const text = params.get(name);
  if (text === null) return 0;
  const n = Number(text);
  return Number.isFinite(n) && n > 0 ? Math.min(Math.floor(n), max) : 0;
}

function readKnobs(query: string): Knobs {
  const params = new URLSearchParams(query);
  return {
    delayMs: intParam(params, 'delay_ms', MAX_DELAY_MS),
    bytes: intParam(params, 'bytes', MAX_BYTES),
    sse: intParam(params, 'sse', MAX_SSE),
    echoHeaders: params.get('echo_headers') === '1',
  };
}

let padCache = '';
function padding(length: number): string {
  if (padCache.length < length) padCache = 'x'.repeat(length);
  return padCache.length === length ? padCache : padCache.slice(0, length);
}

function answerBody(ctx: DemoContext, req: IncomingMessage, path: string, bodyLength: number, bodySha256: string, knobs: Knobs): string {
  const answer: Record<string, unknown> = {
    atespace: ctx.atespace,
    actor: ctx.actor,
    worker: ctx.worker,
    method: req.method,
    path,
    seq: ctx.seq,
    bodyLength,
    bodySha256,
    requestId: ctx.requestId,
  };
  if (knobs.echoHeaders) answer.headers = req.headers;
  const json = JSON.stringify(answer);
  // `,"padding":"` + pad + `"}` replaces the closing brace: 13 more characters than the JSON itself.
  const padLength = knobs.bytes - json.length - 13;
  return padLength < 0 ? json : `${json.slice(0, -1)},"padding":"${padding(padLength)}"}`;
}

function streamEvents(reply: AppReply, body: string, count: number): void {
  reply.head(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = (): void => {
    reply.write(`id: ${sent}\nevent: message\ndata: ${body}\n\n`);
    sent++;
    if (sent >= count) reply.end();
    else timer = setTimeout(next, SSE_INTERVAL_MS);
  };
  reply.onAbort(() => clearTimeout(timer));
  next();
}

function respond(reply: AppReply, req: IncomingMessage, ctx: DemoContext, path: string, bodyLength: number, bodySha256: string, knobs: Knobs): void {
  if (req.headers['x-demo-forge-stale'] === '1') {
    reply.head(421, { 'content-type': 'text/plain', 'content-length': 19, 'X-Ate-Assignment-Stale': 'true' });
    reply.end('misdirected request');
    return;
  }
  const body = answerBody(ctx, req, path, bodyLength, bodySha256, knobs);
  if (knobs.sse > 0) {
    streamEvents(reply, body, knobs.sse);
    return;
  }
  reply.head(200, { 'content-type': JSON_HEADERS, 'content-length': Buffer.byteLength(body) });
  reply.end(body);
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Serves one request. Returns true when the answer is produced later (body, delay or stream), so the worker
 * tracks the response as in flight.
 */
export function demoApp(req: IncomingMessage, reply: AppReply, ctx: DemoContext): boolean {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const knobs = q === -1 ? NO_KNOBS : readKnobs(url.slice(q + 1));
  const later = (bodyLength: number, sha: string): void => {
    if (knobs.delayMs === 0) {
      respond(reply, req, ctx, path, bodyLength, sha, knobs);
      return;
    }
    const timer = setTimeout(() => respond(reply, req, ctx, path, bodyLength, sha, knobs), knobs.delayMs);
    reply.onAbort(() => clearTimeout(timer));
  };
  if (!hasBody(req)) {
    later(0, EMPTY_SHA256);
    return knobs.delayMs > 0 || knobs.sse > 0;
  }
  const hash = createHash('sha256');
  let length = 0;
  req.on('data', (chunk: Buffer) => {
    length += chunk.length;
    hash.update(chunk);
  });
  req.on('end', () => later(length, hash.digest('hex')));
  return true;
}
