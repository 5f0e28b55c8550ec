/** The span of one user filter's request phase (tracing on only): `filter <name>`, a child of the attempt. */
import { SpanKind, type Span } from '@opentelemetry/api';
import { ATTR_FILTER } from '../../lib/tracing/attributes.js';
import type { RequestTrace } from '../request/trace.js';

export function filterSpan(trace: RequestTrace, name: string): Span {
  return trace.child(`filter ${name}`, SpanKind.INTERNAL, { [ATTR_FILTER]: name });
}
