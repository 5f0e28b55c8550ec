/**
 * W3C Trace Context (`traceparent`, `tracestate`) in and out of any carrier that can get and set a header by its
 * lower-case name: HTTP request headers, gRPC metadata. Parents are passed as explicit contexts (nothing global).
 *
 * The propagator (the SDK's `W3CTraceContextPropagator`) is installed by `startTracing` (`provider.ts`), which a
 * component loads only when tracing is on: with tracing off nothing here is called and the SDK is never imported.
 */
import { ROOT_CONTEXT, trace, type Context, type Span, type TextMapGetter, type TextMapPropagator, type TextMapSetter } from '@opentelemetry/api';

export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

let propagator: TextMapPropagator | undefined;

/** Called by `startTracing`, before any span exists. */
export function installPropagator(p: TextMapPropagator): void {
  propagator = p;
}

function installed(): TextMapPropagator {
  if (propagator === undefined) throw new Error('tracing: trace context propagated before startTracing installed the propagator');
  return propagator;
}

type Get = (name: string) => string | undefined;
type Set = (name: string, value: string) => void;

const getter: TextMapGetter<Get> = {
  keys: () => [TRACEPARENT, TRACESTATE],
  get: (get, key) => get(key),
};

const setter: TextMapSetter<Set> = { set: (set, key, value) => set(key, value) };

/** The remote parent a carrier names (the root context when it names none, or an invalid one). */
export function extractParent(get: Get): Context {
  return installed().extract(ROOT_CONTEXT, get, getter);
}

/** Writes `span`'s context (and the trace state it carries) as `traceparent` / `tracestate`. */
export function injectSpan(span: Span, set: Set): void {
  installed().inject(trace.setSpan(ROOT_CONTEXT, span), set, setter);
}
