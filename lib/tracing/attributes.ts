/**
 * Span attribute names the components add beside the OpenTelemetry semantic conventions' (`semconv.ts`): one list,
 * so the proxy and extproc spell them alike.
 */
export const ATTR_ACTOR = 'actor_edge.actor';
export const ATTR_ATESPACE = 'actor_edge.atespace';
/** The actor-cache outcome: `hit`, `miss`, `coalesced`, `rerun` (`none`: no actor, or the cache off). */
export const ATTR_CACHE = 'actor_edge.cache';
/** The worker address (`ip:port`) an attempt went to. */
export const ATTR_WORKER = 'actor_edge.worker';
export const ATTR_REQUEST_ID = 'actor_edge.request_id';
/** Attempts a request took (1 without a re-run). */
export const ATTR_ATTEMPTS = 'actor_edge.attempts';
/** The attempt a span belongs to (0: the first). */
export const ATTR_ATTEMPT = 'actor_edge.attempt';
export const ATTR_RERUN_REASON = 'actor_edge.rerun.reason';
export const ATTR_RERUN_BACKOFF_MS = 'actor_edge.rerun.backoff_ms';
/** What an upstream attempt ended with: `response`, `stale`, `connect-failed`, `reset`, `timeout`, `cancelled`, … */
export const ATTR_UPSTREAM_OUTCOME = 'actor_edge.upstream.outcome';
/** Where the route came from: `cache`, `extproc`, `apiserver`, or a user filter's source. */
export const ATTR_ROUTE_SOURCE = 'actor_edge.route.source';
/** A `PROXY_ERR_*` (or extproc outcome) code of an answer the component made itself. */
export const ATTR_ERROR_CODE = 'actor_edge.error.code';
export const ATTR_FILTER = 'actor_edge.filter';
export const ATTR_UPGRADE = 'actor_edge.upgrade';
export const ATTR_TUNNEL_BYTES_FROM_CLIENT = 'actor_edge.tunnel.bytes_from_client';
export const ATTR_TUNNEL_BYTES_TO_CLIENT = 'actor_edge.tunnel.bytes_to_client';
/** extproc: a ResumeActor caller that started the flight (`leader`) or joined one under way (`joined`). */
export const ATTR_RESUME_ROLE = 'actor_edge.resume.role';
/** extproc: how one request's resolution ended (`ok`, `actor_not_found`, …: the `requests_total` outcome). */
export const ATTR_RESOLVE_OUTCOME = 'actor_edge.resolve.outcome';
