/**
 * Starts a component's tracing, loading the OpenTelemetry SDK only then: a component with tracing off never
 * imports the SDK, its exporter or its propagator (they take a good part of a second to load, on every start of
 * every process). `scripts/check-imports.mjs` keeps it so: only `provider.ts` imports the SDK, and only this file
 * imports `provider.ts`, with `import()`.
 */
import type { Logger } from 'pino';
import type { TracingOn } from './config.js';
import type { Tracing } from './provider.js';

export async function loadTracing(config: TracingOn, component: string, log: Logger): Promise<Tracing> {
  const { startTracing } = await import('./provider.js');
  return startTracing(config, component, log);
}
