/** The actor-cache stage's slice of the proxy's config. */

/** `--actor-cache`, `--cache-ttl-ms`, `--cache-max-entries`, `--cache-refresh-ahead`. */
export interface CacheConfig {
  readonly enabled: boolean;
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly refreshAhead: boolean;
}
