/**
 * An upstream attempt's client span (tracing on only): `<METHOD>` of kind CLIENT under the request's current
 * attempt, with the HTTP client semantic conventions' attributes (the worker as `server.address`/`server.port`,
 * `http.request.resend_count` for a re-run's attempt). Its trace context replaces whatever `traceparent` the
 * request carried, so the worker continues this trace (a client's `tracestate` goes on only with its valid
 * `traceparent`, inside the span context).
 */
import { SpanKind, type Span } from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
} from '../../lib/tracing/semconv.js';
import { ATTR_ATTEMPT, ATTR_UPSTREAM_OUTCOME, ATTR_WORKER } from '../../lib/tracing/attributes.js';
import { injectSpan, TRACESTATE } from '../../lib/tracing/propagation.js';
import type { ProxyRequest } from '../request/context.js';
import { endSpan, type RequestTrace } from '../request/trace.js';

export function startUpstreamSpan(ctx: ProxyRequest, trace: RequestTrace, address: string): Span {
  const colon = address.lastIndexOf(':');
  const q = ctx.path.indexOf('?');
  const span = trace.child(ctx.method, SpanKind.CLIENT, {
    [ATTR_HTTP_REQUEST_METHOD]: ctx.method,
    [ATTR_SERVER_ADDRESS]: address.slice(0, colon).replace(/^\[|\]$/g, ''),
    [ATTR_SERVER_PORT]: Number(address.slice(colon + 1)),
    [ATTR_URL_PATH]: q === -1 ? ctx.path : ctx.path.slice(0, q),
    [ATTR_WORKER]: address,
    [ATTR_ATTEMPT]: ctx.attempt,
    ...(ctx.attempt > 0 ? { [ATTR_HTTP_REQUEST_RESEND_COUNT]: ctx.attempt } : {}),
  });
  const headers = ctx.headers;
  if (headers.has(TRACESTATE)) headers.delete(TRACESTATE);
  injectSpan(span, (name, value) => headers.setTrusted(name, value));
  return span;
}

/** `outcome`: how the attempt ended when it was not a response relayed to its end (`stale`, `connect-failed`, …). */
export function endUpstreamSpan(span: Span, outcome: string | undefined, status?: number): void {
  const attributes = { [ATTR_UPSTREAM_OUTCOME]: outcome ?? 'response', ...(status === undefined ? {} : { [ATTR_HTTP_RESPONSE_STATUS_CODE]: status }) };
  const failed = outcome !== undefined && outcome !== 'response' && outcome !== 'cancelled';
  endSpan(span, failed ? outcome : undefined, attributes);
}
