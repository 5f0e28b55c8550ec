/**
 * extproc's spans (tracing on only):
 * - one SERVER span per `Process` stream, `envoy.service.ext_proc.v3.ExternalProcessor/Process`, whose parent is
 *   the W3C trace context the data plane sent in the call's metadata (the proxy sends its ext_proc client span's;
 *   Envoy ≥ 1.31 sends its own) — so the stream joins the request's trace — with the actor, the atespace, how the
 *   resolution ended and whether this request started the resume flight or joined one under way;
 * - one CLIENT span per ResumeActor call, `ateapi.Control/ResumeActor`, in the trace of the request that started
 *   the flight (a flight's retries are calls of their own), its context sent on in the call's metadata.
 */
import * as grpc from '@grpc/grpc-js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_RPC_METHOD, ATTR_RPC_SYSTEM_NAME } from '../lib/tracing/semconv.js';
import type { ActorRef } from '../lib/actor-ref.js';
import type { AttemptResult } from '../lib/resume/control-client.js';
import { ATTR_ACTOR, ATTR_ATESPACE } from '../lib/tracing/attributes.js';
import { extractParent, injectSpan } from '../lib/tracing/propagation.js';
import { CONTROL_SERVICE, EXT_PROC_SERVICE } from '../lib/wire-contract.js';

export const PROCESS_SPAN = `${EXT_PROC_SERVICE}/Process`;
export const RESUME_SPAN = `${CONTROL_SERVICE}/ResumeActor`;

/** A stream's server span, its parent read from the call's metadata. */
export function startStreamSpan(tracer: Tracer, metadata: grpc.Metadata): Span {
  const parent = extractParent((name) => {
    const value = metadata.get(name)[0];
    return typeof value === 'string' ? value : undefined;
  });
  return tracer.startSpan(PROCESS_SPAN, { kind: SpanKind.SERVER, attributes: { [ATTR_RPC_SYSTEM_NAME]: 'grpc', [ATTR_RPC_METHOD]: PROCESS_SPAN } }, parent);
}

/** The context whose span is `span` (a flight started by this stream parents its calls with it). */
export function spanContext(span: Span): Context {
  return trace.setSpan(ROOT_CONTEXT, span);
}

/** Ends a stream's span with the gRPC status the stream ended with (undefined: the data plane went away). */
export function endStreamSpan(span: Span, code: grpc.status | undefined): void {
  if (code !== undefined) {
    span.setAttribute('rpc.response.status_code', grpc.status[code] ?? String(code));
    if (code !== grpc.status.OK) span.setStatus({ code: SpanStatusCode.ERROR, message: grpc.status[code] });
  }
  span.end();
}

/** One ResumeActor call in its own span: `call` gets the metadata carrying the span's trace context. */
export async function tracedResume(tracer: Tracer, parent: Context, ref: ActorRef, call: (metadata: grpc.Metadata) => Promise<AttemptResult>): Promise<AttemptResult> {
  const span = tracer.startSpan(
    RESUME_SPAN,
    { kind: SpanKind.CLIENT, attributes: { [ATTR_RPC_SYSTEM_NAME]: 'grpc', [ATTR_RPC_METHOD]: RESUME_SPAN, [ATTR_ACTOR]: ref.name, [ATTR_ATESPACE]: ref.atespace } },
    parent,
  );
  const metadata = new grpc.Metadata();
  injectSpan(span, (name, value) => metadata.set(name, value));
  const result = await call(metadata);
  const code = result.kind === 'ok' ? 'OK' : (grpc.status[result.code] ?? String(result.code));
  span.setAttribute('rpc.response.status_code', code);
  if (result.kind === 'ok') span.setAttribute('actor_edge.worker', result.actor.ateom_pod_ip);
  else span.setStatus({ code: SpanStatusCode.ERROR, message: `${code}: ${result.details}` });
  span.end();
  return result;
}
