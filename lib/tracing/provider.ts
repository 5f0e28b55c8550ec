/**
 * One component's tracer: the OpenTelemetry SDK's tracer provider with the configured sampler, a batch span
 * processor and the OTLP/HTTP (JSON) exporter, and the component's resource (`service.name`, `service.version`,
 * `actor_edge.component`). Nothing is registered globally (no global tracer provider, propagator or context
 * manager): callers hand every span its parent explicitly, so a request's spans never depend on async context.
 * Export failures are logged (at most one line per 10 s) on the component's logger.
 *
 * Components import this module only when tracing is on (`load.ts`): the SDK and the exporter take a good part of
 * a second to load, which a component with tracing off never pays.
 */
import { diag, DiagLogLevel, type Tracer } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { BUILD_INFO } from '../build-info.js';
import type { SamplerKind, TracingOn } from './config.js';
import { installPropagator } from './propagation.js';

export interface Tracing {
  readonly tracer: Tracer;
  /** Exports every span ended so far. */
  flush(): Promise<void>;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Replaces the OTLP exporter (tests). */
  readonly exporter?: SpanExporter;
}

function sampler(kind: SamplerKind, ratio: number): Sampler {
  switch (kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

const DIAG_EVERY_MS = 10_000;

/** The SDK reports export failures through `diag`: to the component's log, rate-limited. */
function routeDiagnostics(log: Logger): void {
  let last = -Infinity;
  const warn = (message: string, ...args: unknown[]): void => {
    const now = Date.now();
    if (now - last < DIAG_EVERY_MS) return;
    last = now;
    log.warn({ detail: args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ') }, `tracing: ${message}`);
  };
  const ignore = (): void => undefined;
  diag.setLogger({ error: warn, warn, info: ignore, debug: ignore, verbose: ignore }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
}

/** `component`: `proxy` or `extproc` (the `actor_edge.component` resource attribute). */
export function startTracing(config: TracingOn, component: string, log: Logger, opts: TracingOptions = {}): Tracing {
  routeDiagnostics(log);
  installPropagator(new W3CTraceContextPropagator());
  const exporter = opts.exporter ?? new OTLPTraceExporter({ url: config.endpoint, headers: { ...config.headers }, timeoutMillis: config.exportTimeoutMs });
  const processor = new BatchSpanProcessor(exporter, {
    scheduledDelayMillis: config.batch.scheduledDelayMs,
    maxQueueSize: config.batch.maxQueueSize,
    maxExportBatchSize: Math.min(config.batch.maxExportBatchSize, config.batch.maxQueueSize),
    exportTimeoutMillis: config.batch.exportTimeoutMs,
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      ...config.resource,
      [ATTR_SERVICE_NAME]: config.serviceName,
      [ATTR_SERVICE_VERSION]: BUILD_INFO.version,
      'actor_edge.component': component,
    }),
    sampler: sampler(config.sampler, config.ratio),
    spanProcessors: [processor],
  });
  log.info({ endpoint: config.endpoint, serviceName: config.serviceName, sampler: config.sampler, ratio: config.ratio }, 'tracing on: OTLP/HTTP JSON');
  return {
    tracer: provider.getTracer('actor-edge', BUILD_INFO.version),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
