/**
 * Answers the proxy writes itself — a filter's or ext_proc's local reply, or an error from the catalog — on any
 * downstream exchange. The head is built here once for every protocol: the reply's headers (a header may carry
 * several values, e.g. `set-cookie`), never the worker's stale signal or a framing header, a plain-text
 * content-type for a body without one, and the content-length. A reply whose headers node refuses (a filter's or
 * ext_proc's invalid header) becomes a 500 rather than something half-written. A streamed body (`StreamedBody`,
 * ext_proc's `streamed_immediate_response`) has no content-length: it is written piece by piece after the head
 * (`streamed-body-writer.ts`); a reply that is not written cancels it. A gRPC request's reply (one without a
 * streamed body) is a gRPC status in a trailers-only response (`grpcReplyHead`).
 */
import { isStreamedBody, type LocalReply } from '../api/filter.js';
import { STALE_HEADER } from '../../lib/wire-contract.js';
import type { DownstreamExchange } from './exchange.js';
import { writeStreamedBody } from './streamed-body-writer.js';
import { grpcMessage, grpcStatusOf } from './grpc.js';

/** A local reply as the proxy writes it: like `LocalReply`, but a header may carry several values (`set-cookie`). */
export type MultiValueLocalReply = Omit<LocalReply, 'headers'> & { readonly headers?: Readonly<Record<string, string | readonly string[]>> };

const TEXT = 'text/plain; charset=utf-8';
const INTERNAL_BODY = Buffer.from('internal proxy error\n');
/** Headers a reply never carries as given: the stale signal, and what frames or scopes the body's connection. */
const NEVER: ReadonlySet<string> = new Set([STALE_HEADER, 'content-length', 'transfer-encoding', 'connection']);

export interface LocalReplyHead {
  readonly status: number;
  readonly headers: string[];
  /** The whole body (undefined: none, or a streamed one). */
  readonly body: Buffer | undefined;
}

/**
 * A local reply to a gRPC request, as Envoy answers one: a trailers-only response (`:status` 200, no body) whose
 * `grpc-status` is the reply's own (an ext_proc immediate response's `grpc_status`) or gRPC's mapping of its HTTP
 * status, and whose `grpc-message` is its text (or, for a reply without text, its own `grpc-message`). A gRPC
 * client reads the status; an HTTP error page it cannot read. Not for a streamed body (`writeLocalReply`).
 */
export function grpcReplyHead(reply: MultiValueLocalReply): LocalReplyHead {
  const given = reply.headers?.['grpc-status'];
  const code = typeof given === 'string' && /^\d{1,2}$/.test(given) ? given : String(grpcStatusOf(reply.status | 0));
  const raw = reply.body;
  const text = raw === undefined || isStreamedBody(raw) ? '' : Buffer.from(raw).toString().trim();
  const ownMessage = reply.headers?.['grpc-message'];
  const headers: string[] = ['content-type', 'application/grpc', 'grpc-status', code];
  if (text !== '') headers.push('grpc-message', grpcMessage(text));
  else if (typeof ownMessage === 'string' && ownMessage !== '') headers.push('grpc-message', ownMessage);
  for (const [name, value] of Object.entries(reply.headers ?? {})) {
    const lower = name.toLowerCase();
    if (NEVER.has(lower) || lower === 'content-type' || lower === 'grpc-status' || lower === 'grpc-message') continue;
    if (typeof value === 'string') headers.push(lower, value);
    else for (const v of value) headers.push(lower, v);
  }
  return { status: 200, headers, body: undefined };
}

/** The status, header list and body a reply is written with (a streamed body's head has no content-length). */
export function localReplyHead(reply: MultiValueLocalReply): LocalReplyHead {
  let status = reply.status | 0;
  // 1xx is no final answer (200, as Envoy); past 599 is no status at all (RFC 9110 §15), which only HTTP/2 refused.
  if (status < 200 || status > 599) status = status >= 100 && status < 200 ? 200 : 500;
  const raw = reply.body;
  const streamed = isStreamedBody(raw);
  const body = raw === undefined || streamed ? undefined : typeof raw === 'string' ? Buffer.from(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const headers: string[] = [];
  let hasType = false;
  if (reply.headers !== undefined) {
    for (const [name, value] of Object.entries(reply.headers)) {
      const lower = name.toLowerCase();
      if (NEVER.has(lower)) continue;
      if (lower === 'content-type') hasType = true;
      if (typeof value === 'string') headers.push(lower, value);
      else for (const v of value) headers.push(lower, v);
    }
  }
  if (body !== undefined && body.length > 0 && !hasType) headers.push('content-type', TEXT);
  if (!streamed) headers.push('content-length', String(body?.length ?? 0));
  return { status, headers, body };
}

/** Cancels the reply's body when it is a streamed one that will not be written (the reply was replaced). */
export function discardReplyBody(reply: MultiValueLocalReply): void {
  if (isStreamedBody(reply.body)) reply.body.cancel();
}

/** How writing a reply went: not at all (a response already started, or the client is gone), or written. */
export type LocalReplyWrite =
  | { readonly kind: 'not-written' }
  /** `bytes`: the body's length; `invalid`: the reply's own headers were refused, and a 500 went out instead (the reason, for the log). */
  | { readonly kind: 'written'; readonly bytes: number; readonly invalid?: string };

const NOT_WRITTEN: LocalReplyWrite = Object.freeze({ kind: 'not-written' });
const WRITTEN_EMPTY: LocalReplyWrite = Object.freeze({ kind: 'written', bytes: 0 });

export const REQUEST_ID_HEADER = 'x-request-id';

const isRequestId = (name: string): boolean => name.length === REQUEST_ID_HEADER.length && name.toLowerCase() === REQUEST_ID_HEADER;

/** A copy of `headers` (a response head's list) carrying `requestId` as its one `x-request-id` (any other one removed). */
export function withRequestId(headers: readonly string[], requestId: string): string[] {
  const out = headers.slice();
  setRequestId(out, requestId);
  return out;
}

/** Makes `requestId` the one `x-request-id` of `headers`, in place (a worker's own is replaced). */
export function setRequestId(headers: string[], requestId: string): void {
  let at = -1;
  for (let i = 0; i < headers.length; i += 2) {
    if (!isRequestId(headers[i] as string)) continue;
    if (at === -1) at = i;
    else {
      headers.splice(i, 2);
      i -= 2;
    }
  }
  if (at === -1) headers.push(REQUEST_ID_HEADER, requestId);
  else headers[at + 1] = requestId;
}

/** What the request being answered asks of its reply. */
export interface LocalReplyOptions {
  /** A gRPC request: a reply without a streamed body is written as a gRPC status (`grpcReplyHead`). */
  readonly grpc?: boolean;
  /** The request is a HEAD: the head only (a streamed body is not read at all). */
  readonly headRequest?: boolean;
  /** Hears what went wrong with a streamed body after the head (a broken source), for the request's log line. */
  readonly note?: (details: string) => void;
  /** The request's id: the reply's one `x-request-id`. */
  readonly requestId?: string;
  /** Hears the bytes of a streamed body as they are sent (the access log's `bytesOut`). */
  readonly sent?: (bytes: number) => void;
}

/**
 * Writes `reply` unless a response already started or the client is gone. A reply without a body ends with its
 * head (HTTP/2: a HEADERS frame with END_STREAM, gRPC's trailers-only form). A streamed body goes on after this
 * returns — unless the response can carry none (a HEAD request, 204, 304): then the head ends the response and the
 * source is cancelled. A streamed body is written as its source made it, to a gRPC request too (the processor
 * streams a gRPC response of its own, with its own `grpc-status` trailers). `bytes` counts a whole body; a
 * streamed one's go to `sent` as they are written.
 */
export function writeLocalReply(exchange: DownstreamExchange, reply: MultiValueLocalReply, opts: LocalReplyOptions = {}): LocalReplyWrite {
  const streamed = isStreamedBody(reply.body) ? reply.body : undefined;
  if (exchange.headSent || exchange.gone) {
    streamed?.cancel();
    return NOT_WRITTEN;
  }
  const head = opts.grpc === true && streamed === undefined ? grpcReplyHead(reply) : localReplyHead(reply);
  if (opts.requestId !== undefined) setRequestId(head.headers, opts.requestId); // the head's list is its own
  const headOnly =
    streamed === undefined ? head.body === undefined || head.body.length === 0 : opts.headRequest === true || head.status === 204 || head.status === 304;
  try {
    if (headOnly) {
      streamed?.cancel();
      exchange.respondHeadOnly(head.status, head.headers);
      return WRITTEN_EMPTY;
    }
    exchange.startResponse(head.status, head.headers);
  } catch (err) {
    streamed?.cancel();
    const fallback = ['content-type', TEXT, 'content-length', String(INTERNAL_BODY.length)];
    if (opts.requestId !== undefined) setRequestId(fallback, opts.requestId);
    exchange.startResponse(500, fallback);
    exchange.finishResponse(INTERNAL_BODY);
    return { kind: 'written', bytes: INTERNAL_BODY.length, invalid: `invalid local reply: ${(err as Error).message}` };
  }
  if (streamed === undefined) {
    exchange.finishResponse(head.body);
    return { kind: 'written', bytes: head.body?.length ?? 0 };
  }
  writeStreamedBody(exchange, streamed, opts.note ?? ignore, opts.sent);
  return WRITTEN_EMPTY;
}

function ignore(): void {}
