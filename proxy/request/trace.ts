/**
 * One request's trace, kept on the request (`ProxyRequest.trace`) only while tracing is on: the server span the
 * lifecycle starts at the request's head and ends when the request finishes, and the parent of the current
 * attempt's spans — the server span for the first attempt, that re-run's span for every later one — so the tree
 * reads: server → user filters, cache lookup, ext_proc stream, upstream attempt; and server → re-run N → the same
 * for attempt N.
 *
 * With tracing off there is no trace object at all: every site checks `ctx.trace !== undefined` once and does
 * nothing else. A request the sampler did not pick keeps its trace (its `traceparent` still goes to the worker
 * and to extproc, flagged not sampled) but makes no child span: `child` hands back the server span's context
 * wrapped as a span that records nothing.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_ATTEMPT, ATTR_RERUN_BACKOFF_MS, ATTR_RERUN_REASON } from '../../lib/tracing/attributes.js';

export class RequestTrace {
  readonly server: Span;
  readonly #tracer: Tracer;
  readonly #serverContext: Context;
  #attemptContext: Context;
  #rerun: Span | undefined;
  #unrecorded: Span | undefined;

  constructor(tracer: Tracer, name: string, parent: Context) {
    this.#tracer = tracer;
    this.server = tracer.startSpan(name, { kind: SpanKind.SERVER }, parent);
    this.#serverContext = trace.setSpan(parent, this.server);
    this.#attemptContext = this.#serverContext;
  }

  /** The sampler picked this request: its spans are recorded and exported. */
  get recording(): boolean {
    return this.server.isRecording();
  }

  get traceId(): string {
    return this.server.spanContext().traceId;
  }

  /** A span of the current attempt (end it; a request that is not recorded gets one that records nothing). */
  child(name: string, kind: SpanKind = SpanKind.INTERNAL, attributes?: Attributes): Span {
    if (!this.server.isRecording()) return (this.#unrecorded ??= trace.wrapSpanContext(this.server.spanContext()));
    return this.#tracer.startSpan(name, attributes === undefined ? { kind } : { kind, attributes }, this.#attemptContext);
  }

  /** Re-run `attempt` (1, 2, …) starts (after `delayMs` of backoff): its span parents that attempt's spans. */
  rerun(reason: string, attempt: number, delayMs: number): void {
    this.#rerun?.end();
    if (!this.server.isRecording()) return;
    const span = this.#tracer.startSpan(
      'rerun',
      { kind: SpanKind.INTERNAL, attributes: { [ATTR_RERUN_REASON]: reason, [ATTR_ATTEMPT]: attempt, [ATTR_RERUN_BACKOFF_MS]: delayMs } },
      this.#serverContext,
    );
    this.#rerun = span;
    this.#attemptContext = trace.setSpan(this.#serverContext, span);
  }

  /** Ends the request's spans: the last re-run's, then the server span (an `error`: its status is ERROR). */
  end(attributes: Attributes, error: string | undefined): void {
    this.#rerun?.end();
    this.#rerun = undefined;
    const server = this.server;
    if (server.isRecording()) {
      server.setAttributes(attributes);
      if (error !== undefined) server.setStatus({ code: SpanStatusCode.ERROR, message: error });
    }
    server.end();
  }
}

/** Ends `span` (an error: with status ERROR and `error.type`). */
export function endSpan(span: Span, error?: string, attributes?: Attributes): void {
  if (span.isRecording()) {
    if (attributes !== undefined) span.setAttributes(attributes);
    if (error !== undefined) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      span.setAttribute('error.type', error);
    }
  }
  span.end();
}
