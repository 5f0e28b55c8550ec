/**
 * Tracing configuration from the standard OpenTelemetry environment variables, read by each component's config in
 * its one place (the proxy's `config.ts`, extproc's `config.ts`) and frozen there. Tracing is off unless
 * `OTEL_TRACES_EXPORTER` names an exporter (the specification's default is `otlp`; a proxy sends nothing anywhere
 * unless told to).
 *
 * | variable | values (default) |
 * |---|---|
 * | `OTEL_SDK_DISABLED` | `true`: off, whatever else is set |
 * | `OTEL_TRACES_EXPORTER` | `otlp` (OTLP/HTTP, JSON) or `none` (unset: off) |
 * | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` | the full URL spans are posted to |
 * | `OTEL_EXPORTER_OTLP_ENDPOINT` | a base URL: spans go to `<base>/v1/traces` (`http://localhost:4318`) |
 * | `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, `OTEL_EXPORTER_OTLP_PROTOCOL` | `http/json` only (`http/json`) |
 * | `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, `OTEL_EXPORTER_OTLP_HEADERS` | `key=value,...` sent with every export |
 * | `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, `OTEL_EXPORTER_OTLP_TIMEOUT` | ms per export (10000) |
 * | `OTEL_SERVICE_NAME` | the `service.name` resource attribute (the component's: `actor-edge-proxy`, `actor-edge-extproc`) |
 * | `OTEL_RESOURCE_ATTRIBUTES` | `key=value,...` more resource attributes (`service.name` here counts when `OTEL_SERVICE_NAME` is unset) |
 * | `OTEL_TRACES_SAMPLER` | `always_on`, `always_off`, `traceidratio`, `parentbased_always_on`, `parentbased_always_off`, `parentbased_traceidratio` (`parentbased_always_on`) |
 * | `OTEL_TRACES_SAMPLER_ARG` | the ratio of the `traceidratio` samplers, 0 to 1 (1) |
 * | `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, `OTEL_BSP_EXPORT_TIMEOUT` | the batch span processor (5000 ms, 2048, 512, 30000 ms) |
 */
import { UsageError } from '../flags.js';

export type SamplerKind = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

const SAMPLERS: readonly SamplerKind[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

export interface TracingOn {
  readonly enabled: true;
  /** Where OTLP spans are posted (`…/v1/traces`). */
  readonly endpoint: string;
  /** Sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`), e.g. an authorization header. */
  readonly headers: Readonly<Record<string, string>>;
  /** How long one export may take before it is abandoned. */
  readonly exportTimeoutMs: number;
  /** The `service.name` resource attribute. */
  readonly serviceName: string;
  /** More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`). */
  readonly resource: Readonly<Record<string, string>>;
  readonly sampler: SamplerKind;
  /** The ratio of a `traceidratio` sampler. */
  readonly ratio: number;
  readonly batch: {
    readonly scheduledDelayMs: number;
    readonly maxQueueSize: number;
    readonly maxExportBatchSize: number;
    readonly exportTimeoutMs: number;
  };
}

export type TracingConfig = { readonly enabled: false } | TracingOn;

export const TRACING_OFF: TracingConfig = Object.freeze({ enabled: false });

const DEFAULT_BASE = 'http://localhost:4318';

/** `key=value,key=value` (values percent-decoded, as the specification says). */
function keyValues(text: string | undefined, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? '').split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) throw new UsageError(`${name}: "${part.trim()}" is not key=value`);
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw new UsageError(`${name}: "${part.trim()}" has a malformed percent-encoding`);
    }
    out[part.slice(0, eq).trim()] = value;
  }
  return out;
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${name}: expected a positive integer, got "${raw}"`);
  return n;
}

function first(env: NodeJS.ProcessEnv, ...names: string[]): { readonly name: string; readonly value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') return { name, value: value.trim() };
  }
  return undefined;
}

function url(text: string, name: string): string {
  try {
    const u = new URL(text);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
    return u.href;
  } catch {
    throw new UsageError(`${name}: "${text}" is not an http(s) URL`);
  }
}

/** The OTLP/HTTP traces URL: the traces endpoint as given, else the base endpoint + `/v1/traces`. */
function endpoint(env: NodeJS.ProcessEnv): string {
  const traces = first(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (traces !== undefined) return url(traces.value, traces.name);
  const base = first(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const href = base === undefined ? DEFAULT_BASE : url(base.value, base.name);
  return `${href.replace(/\/+$/, '')}/v1/traces`;
}

/** Reads the tracing settings from `env`; `serviceName` is the component's default `service.name`. */
export function readTracingConfig(env: NodeJS.ProcessEnv, serviceName: string): TracingConfig {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return TRACING_OFF;
  const exporter = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase();
  if (exporter === '' || exporter === 'none') return TRACING_OFF;
  if (exporter !== 'otlp') throw new UsageError(`OTEL_TRACES_EXPORTER: "${exporter}" is not supported (otlp or none)`);
  const protocol = first(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL');
  if (protocol !== undefined && protocol.value !== 'http/json') {
    throw new UsageError(`${protocol.name}: "${protocol.value}" is not supported; spans are exported as OTLP/HTTP JSON (http/json)`);
  }
  const samplerText = (env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || 'parentbased_always_on';
  if (!SAMPLERS.includes(samplerText as SamplerKind)) throw new UsageError(`OTEL_TRACES_SAMPLER: "${samplerText}" is not one of ${SAMPLERS.join(', ')}`);
  const sampler = samplerText as SamplerKind;
  const ratioText = (env.OTEL_TRACES_SAMPLER_ARG ?? '').trim();
  const ratio = ratioText === '' ? 1 : Number(ratioText);
  if (sampler.endsWith('traceidratio') && !(ratio >= 0 && ratio <= 1)) throw new UsageError(`OTEL_TRACES_SAMPLER_ARG: expected a ratio from 0 to 1, got "${ratioText}"`);
  const resource = keyValues(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES');
  const headers = keyValues(first(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_EXPORTER_OTLP_HEADERS')?.value, 'OTEL_EXPORTER_OTLP_HEADERS');
  const timeout = first(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT');
  const freeze = Object.freeze;
  return freeze({
    enabled: true,
    endpoint: endpoint(env),
    headers: freeze(headers),
    exportTimeoutMs: timeout === undefined ? 10_000 : positive(env, timeout.name, 10_000),
    serviceName: (env.OTEL_SERVICE_NAME ?? '').trim() || resource['service.name'] || serviceName,
    resource: freeze(resource),
    sampler,
    ratio: sampler.endsWith('traceidratio') ? ratio : 1,
    batch: freeze({
      scheduledDelayMs: positive(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
      maxQueueSize: positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048),
      maxExportBatchSize: positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
      exportTimeoutMs: positive(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000),
    }),
  });
}

/** The environment variables tracing reads, as a component's flag set lists them (`--help`, the flag reference). */
export const OTEL_VARIABLES = {
  'OTEL_*': 'OpenTelemetry tracing, off unless OTEL_TRACES_EXPORTER=otlp: OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _TIMEOUT, OTEL_TRACES_SAMPLER(_ARG), OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED (spans as OTLP/HTTP JSON).',
} as const;
