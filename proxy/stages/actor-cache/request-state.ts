/** The actor-cache stage's state for one client request (a typed slot on the request context, across re-runs). */

/** The cache's part in one client request, for the access log: `rerun` once any attempt was re-run. */
export type CacheOutcome = 'hit' | 'miss' | 'rerun';

export interface CacheRequestState {
  readonly key: string;
  /** The authority's port, as the `x-ate-target-port` value. */
  readonly portText: string;
  /** The attempt the two fields below describe. */
  attempt: number;
  /** The generation of the binding this attempt was routed with (undefined: a miss). */
  generation: number | undefined;
  /** This attempt's binding has already been evicted (eviction is idempotent per attempt). */
  evicted: boolean;
  outcome: CacheOutcome;
}
