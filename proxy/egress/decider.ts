/**
 * What decides a CONNECT that passed the listener's own checks: an `EgressDecider` is handed the CONNECT's key
 * (the certificate's digest and the destination) and the slow path (one ext_proc stream), and answers a verdict and
 * how the cache took part. `passThroughDecider` is the decider without a cache: the slow path every time.
 */

/** A CONNECT's cache key. */
export interface EgressKey {
  /** sha256 of the actor certificate's DER, lowercase hex. */
  readonly certDigest: string;
  /** "IP:port" as the CONNECT named it, normalised. */
  readonly destination: string;
}

export type EgressVerdict =
  | { readonly kind: 'allow'; readonly actorId: string; readonly atespace: string; readonly name: string; readonly rule: number }
  | { readonly kind: 'deny'; readonly status: number; readonly body: string; readonly outcome: string };

/** What the slow path answers: the verdict, and whether it may be cached. */
export interface SlowPathAnswer {
  readonly verdict: EgressVerdict;
  readonly cacheable: boolean;
}

export type EgressCacheUse = 'hit' | 'miss' | 'joined' | 'off';

export interface EgressDecider {
  decide(key: EgressKey, certNotAfterMs: number, slowPath: () => Promise<SlowPathAnswer>): Promise<{ verdict: EgressVerdict; cache: EgressCacheUse }>;
}

/** No cache: every CONNECT takes the slow path. */
export const passThroughDecider: EgressDecider = Object.freeze({
  async decide(_key: EgressKey, _notAfterMs: number, slowPath: () => Promise<SlowPathAnswer>) {
    return { verdict: (await slowPath()).verdict, cache: 'off' as const };
  },
});
