/**
 * The wire contract between the proxy, extproc, the control plane and the workers: every header name, metadata
 * namespace and key, proto file and service name, and shared default that more than one component speaks. Each is
 * spelled here once; components import it, so a typo in one of them cannot drift from the others. (Tests spell the
 * literals themselves on purpose: they check this module from outside.)
 */
import { status as GrpcStatus } from '@grpc/grpc-js';

// ---- Internal request and response headers (lower case, as node and undici deliver them) ----

/** Set on a routed request: the port the client's Host named (80 when it named none). */
export const TARGET_PORT_HEADER = 'x-ate-target-port';
/** Names the actor a routed request is for (Envoy-era ingress header; stripped by proxy and worker alike). */
export const TARGET_ACTOR_HEADER = 'ate-target-actor';
/** Envoy-era marker that the endpoint came from a cache. */
export const ENDPOINT_CACHED_HEADER = 'ate-endpoint-cached';
/** Envoy-era copies of the original Host and destination. */
export const ORIGINAL_HOST_HEADER = 'x-ate-original-host';
export const ORIGINAL_DST_HEADER = 'x-ate-original-dst';
/** Envoy's ORIGINAL_DST header override. */
export const ENVOY_ORIGINAL_DST_HOST_HEADER = 'x-envoy-original-dst-host';
/** A worker's "this actor is not here": `421` with this header set to STALE_HEADER_VALUE (case-insensitive). */
export const STALE_HEADER = 'x-ate-assignment-stale';
export const STALE_HEADER_VALUE = 'true';
/** The status that carries the stale signal. */
export const STALE_STATUS = 421;

/** Request headers a client could forge to steer routing or fake the stale signal: removed at the ingress. */
export const INTERNAL_HEADERS: readonly string[] = Object.freeze([
  ENDPOINT_CACHED_HEADER,
  TARGET_PORT_HEADER,
  TARGET_ACTOR_HEADER,
  ORIGINAL_HOST_HEADER,
  ORIGINAL_DST_HEADER,
  STALE_HEADER,
  ENVOY_ORIGINAL_DST_HOST_HEADER,
]);

// ---- ext_proc dynamic metadata read by Envoy's ORIGINAL_DST cluster ----

/** The metadata namespace Envoy's ORIGINAL_DST cluster reads. */
export const ORIGINAL_DST_NAMESPACE = 'envoy.filters.listener.original_dst';
/** Key of the worker address to connect to: a literal `ip:port` (IPv6 in brackets). */
export const ORIGINAL_DST_LOCAL_KEY = 'local';
/** Key of the target port (the TARGET_PORT_HEADER value), as a string. */
export const ORIGINAL_DST_PORT_KEY = 'port';

// ---- ext_proc stream metadata (gRPC initial metadata of a Process call) ----

/**
 * Sent by the actor-edge proxy on every Process stream it opens for a request: the milliseconds left of that
 * request's re-run budget (`--rerun-budget-ms`, capped at the message timeout). extproc retries a resume only
 * while a retry can start within it, and answers with the last retryable error once none can (so the client gets
 * the 503 at the budget, not a timeout). A data plane that does not send it (Envoy) gets extproc's own budget.
 */
export const RESUME_BUDGET_METADATA = 'actor-edge-resume-budget-ms';

// ---- Proto files (relative to proto/) and fully qualified service names ----

export const EXT_PROC_PROTO = 'envoy/service/ext_proc/v3/external_processor.proto';
export const EXT_PROC_SERVICE = 'envoy.service.ext_proc.v3.ExternalProcessor';
export const CONTROL_PROTO = 'ateapi/ateapi.proto';
export const CONTROL_SERVICE = 'ateapi.Control';
export const WORKERS_PROTO = 'atestub/atestub.proto';
export const WORKERS_SERVICE = 'atestub.Workers';

// ---- Shared defaults ----

/** How long one resume (every retry of it) may take: extproc's `--resume-budget-ms` default, and the proxy's own resolver's. */
export const DEFAULT_RESUME_BUDGET_MS = 15_000;

/** A gRPC status code's name as in the gRPC spec (`NOT_FOUND`, ...), used as a metric label and a `/stats` key. */
export function grpcCodeName(code: number): string {
  return (GrpcStatus as unknown as Record<number, string | undefined>)[code] ?? `CODE_${code}`;
}
