/**
 * Answers the proxy writes itself: a filter's or ext_proc's local reply, or an error from the catalog.
 * The worker's stale signal is removed here too, so no response the client receives ever carries it.
 */
import type { MultiValueLocalReply } from '../request/stage-context.js';
import type { ProxyRequest } from '../request/context.js';
import { errorReply, type ProxyErrorSpec } from '../chain/errors.js';
import { STALE_HEADER } from '../upstream/outcome.js';
import { isStreamedBody } from '../api/filter.js';
import { writeStreamedBody } from '../http/streamed-body-writer.js';

const TEXT = 'text/plain; charset=utf-8';
const INTERNAL_BODY = Buffer.from('internal proxy error\n');

/** Writes `reply` unless the client is gone or a response already started. Returns false when nothing was written. */
export function sendLocalReply(ctx: ProxyRequest, reply: MultiValueLocalReply): boolean {
  const res = ctx.res;
  const streamed = isStreamedBody(reply.body) ? reply.body : undefined;
  if (ctx.responseState !== 'unsent' || res.headersSent || res.destroyed || res.writableEnded) {
    streamed?.cancel();
    return false;
  }
  ctx.responseState = 'started';
  if (reply.details !== undefined) ctx.details = reply.details;
  let status = reply.status | 0;
  if (status < 200 || status > 999) status = status >= 100 && status < 200 ? 200 : 500;
  const body = streamed !== undefined || reply.body === undefined ? undefined : typeof reply.body === 'string' ? Buffer.from(reply.body) : (reply.body as Uint8Array);
  const headers: string[] = [];
  let hasType = false;
  if (reply.headers !== undefined) {
    for (const [name, value] of Object.entries(reply.headers)) {
      const lower = name.toLowerCase();
      if (lower === STALE_HEADER || lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection') continue;
      if (lower === 'content-type') hasType = true;
      if (typeof value === 'string') headers.push(lower, value);
      else for (const v of value) headers.push(lower, v);
    }
  }
  if (body !== undefined && body.length > 0 && !hasType) headers.push('content-type', TEXT);
  if (streamed === undefined) headers.push('content-length', String(body?.length ?? 0));
  try {
    res.writeHead(status, headers);
  } catch (err) {
    // An invalid header from a filter or ext_proc: answer 500 rather than something half-written.
    ctx.details = `invalid local reply: ${(err as Error).message}`;
    streamed?.cancel();
    res.writeHead(500, ['content-type', TEXT, 'content-length', String(INTERNAL_BODY.length)]);
    res.end(INTERNAL_BODY);
    return true;
  }
  if (streamed !== undefined) writeStreamedBody(ctx, streamed);
  else res.end(body);
  return true;
}

/** Writes a catalog error: its status and plain-text body. */
export function sendError(ctx: ProxyRequest, spec: ProxyErrorSpec, details?: string): boolean {
  ctx.error = spec;
  return sendLocalReply(ctx, errorReply(spec, details));
}
