/**
 * W3C Trace Context (`traceparent`, `tracestate`) in and out of any carrier that can get and set a header by its
 * lower-case name: HTTP request headers, gRPC metadata. Parents are passed as explicit contexts (nothing global).
 */
import { ROOT_CONTEXT, trace, type Context, type Span, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

const propagator = new W3CTraceContextPropagator();

type Get = (name: string) => string | undefined;
type Set = (name: string, value: string) => void;

const getter: TextMapGetter<Get> = {
  keys: () => [TRACEPARENT, TRACESTATE],
  get: (get, key) => get(key),
};

const setter: TextMapSetter<Set> = { set: (set, key, value) => set(key, value) };

/** The remote parent a carrier names (the root context when it names none, or an invalid one). */
export function extractParent(get: Get): Context {
  return propagator.extract(ROOT_CONTEXT, get, getter);
}

/** Writes `span`'s context (and the trace state it carries) as `traceparent` / `tracestate`. */
export function injectSpan(span: Span, set: Set): void {
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), set, setter);
}
