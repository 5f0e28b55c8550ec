/**
 * The proxy's containment boundary (`lib/containment.ts`): where a peer's input starts work in the proxy, each
 * place named once here. A contained error ends its request, stream or tunnel alone and counts in
 * `actor_edge_proxy_internal_errors_total{where}` and the `/stats` block `internalErrors`.
 */
import type { Logger } from 'pino';
import { Containment } from '../../lib/containment.js';

/** Where a peer's input starts work: the `where` label of a contained error. */
export const CONTAINMENT_SITES = Object.freeze([
  /** A client connection accepted: protocol sniffing, the TLS handshake's outcome, an HTTP/2 session. */
  'connection',
  /** An HTTP/1.1 request (its head, and everything its lifecycle registers). */
  'http1-request',
  /** An HTTP/2 stream of any method. */
  'h2-stream',
  /** An HTTP/1.1 upgrade handed over with its socket. */
  'upgrade',
  /** A request on a CONNECT listener (plain or TLS). */
  'connect',
  /** An open tunnel's events. */
  'tunnel',
  /** A worker's response head, body and trailers. */
  'upstream-response',
  /** A message from the ext_proc server. */
  'extproc-message',
  /** An admin API request. */
  'admin',
  /** A filter reload. */
  'filter-reload',
  /** A request on the egress listener (an HTTP/1.1 CONNECT or other method, an HTTP/2 stream), up to its answer. */
  'egress-connect',
  /** An open egress tunnel's events. */
  'egress-tunnel',
] as const);

export type ContainmentSite = (typeof CONTAINMENT_SITES)[number];

export type ProxyContainment = Containment<ContainmentSite>;

/** Contained errors by site (lifetime tallies). */
export type InternalErrorTallies = Record<ContainmentSite, number>;

export function internalErrorTallies(): InternalErrorTallies {
  return Object.fromEntries(CONTAINMENT_SITES.map((s) => [s, 0])) as InternalErrorTallies;
}

export function createProxyContainment(log: Logger, tallies: InternalErrorTallies): ProxyContainment {
  return new Containment<ContainmentSite>({ log, count: (where) => void tallies[where]++ });
}
