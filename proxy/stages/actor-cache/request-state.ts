/** The actor-cache stage's state for one client request (a typed slot on the request context, across re-runs). */
import { RequestSlot } from '../../request/slots.js';
import type { Flight } from './miss-flights.js';

/**
 * The cache's part in one client request, for the access log: `coalesced` when it waited for another request's
 * miss and went as a hit, `rerun` once any attempt was re-run.
 */
export type CacheStatus = 'hit' | 'miss' | 'coalesced' | 'rerun';

export interface CacheRequestState {
  readonly key: string;
  /** The authority's port, as the `x-ate-target-port` value. */
  readonly portText: string;
  /** The attempt the fields below describe. */
  attempt: number;
  /** The generation of the binding this attempt was routed with (undefined: a miss). */
  generation: number | undefined;
  /** The cache's generation mark when this attempt began: bindings below it were learned before it. */
  mark: number;
  /** This attempt's failure has already been acted on (eviction is idempotent per attempt). */
  evicted: boolean;
  /** The miss flight this request leads, until it settles. */
  leading: Flight | undefined;
  outcome: CacheStatus;
}

/** Where a request keeps its cache state. */
export const CACHE_SLOT = new RequestSlot<CacheRequestState>('actor-cache');
