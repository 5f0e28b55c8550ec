/** The upstream slice of the proxy's config: how the router reaches the workers. */
import type { UpstreamTlsSettings } from './tls.js';

/** mTLS to the workers: the proxy's credential bundle, the CAs it trusts, the SPIFFE prefix it accepts. */
export type UpstreamTlsConfig = UpstreamTlsSettings;

export interface UpstreamConfig {
  /** Upstream response headers must arrive within this time (504 otherwise). */
  readonly routeTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Connections to one worker at most. */
  readonly maxConnections: number;
  /** Requests waiting for a connection to one worker at most. */
  readonly maxPending: number;
  /** mTLS to the workers; undefined: plaintext. */
  readonly tls: UpstreamTlsConfig | undefined;
}
