/** The egress verdict cache's slice of the proxy's config. */

/** `--egress-cache`, `--egress-cache-ttl-ms`, `--egress-cache-max-entries`. */
export interface EgressCacheConfig {
  /** Off: every CONNECT takes the slow path, nothing is stored. */
  readonly enabled: boolean;
  /** How long a verdict is served at most (never past the certificate's NotAfter). */
  readonly ttlMs: number;
  /** The LRU bound. */
  readonly maxEntries: number;
}
