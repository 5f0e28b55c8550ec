/**
 * The egress decision in front of the slow path: with the verdict cache, a hit answers and a miss runs the slow path
 * once per key (concurrent misses share it) and caches what may be cached; without it, the slow path runs for every
 * CONNECT. Counts the slow paths run, the ones that failed, and the verdicts not cached by their outcome.
 *
 * A verdict that may open a tunnel (an allow, or one decided on the traffic by hostname rules) comes with its lease
 * (`Lease`): the cache entry that granted it, or (cache off, or a verdict that could not be stored) one made for it,
 * lasting `--egress-cache-ttl-ms` but never past the certificate's NotAfter. The tunnels it opens hold that lease and
 * are re-validated before it runs out (`revalidate`, `grants.ts`). Every verdict a slow
 * path gave here is told to `news` (the grants' signals), once per slow path.
 */
import { EGRESS_OUTCOMES, type EgressOutcome } from '../../lib/egress/wire.js';
import { SinceReset } from '../../lib/since-reset.js';
import { decisionCounts, type DecisionCounts, type VerdictOutcome } from './egress-cache-counters.js';
import { LOCAL_ORIGIN, type CachedVerdict, type EgressKey, type EgressVerdict, type EgressVerdictCache, type Lease, type Resolution } from './verdict-cache.js';

export type EgressCacheUse = 'hit' | 'miss' | 'joined' | 'off';

/** What a decision gave: the verdict, where it came from, and (a verdict that may open a tunnel) its lease. */
export interface Decision {
  readonly verdict: EgressVerdict;
  readonly cache: EgressCacheUse;
  /** Present for an allow and for a verdict decided on the traffic (`opensTunnels`). */
  readonly lease?: Lease | undefined;
}

/** Whether `verdict` may open a tunnel (an allow, or hostname rules the traffic may match): it comes with a lease. */
export function opensTunnels(verdict: EgressVerdict): boolean {
  return verdict.kind !== 'deny';
}

/** Who hears the verdicts the slow path gives (once per slow path, joiners not again). */
export interface VerdictNews {
  learned(key: EgressKey, verdict: EgressVerdict, lease: Lease | undefined): void;
}

export interface EgressDecider {
  /**
   * Cache on: a hit answers; a miss calls `slowPath` once per key (singleflight) and caches what may be cached.
   * Cache off: `slowPath` every time. A `slowPath` that rejects rejects every caller that shared it.
   */
  decide(key: EgressKey, certNotAfterMs: number, slowPath: () => Promise<Resolution>): Promise<Decision>;
  /**
   * A grant's re-validation: `slowPath` without a lookup (sharing a CONNECT's miss for the key in flight), its verdict
   * stored as a miss's would be, so an allow renews the entry (a fresh TTL, never past the NotAfter).
   */
  revalidate(key: EgressKey, certNotAfterMs: number, slowPath: () => Promise<Resolution>): Promise<Decision>;
  /** How long a lease lasts (`--egress-cache-ttl-ms`, with the cache on or off): what grants re-validate within. */
  readonly ttlMs: number;
}

export { VERDICT_OUTCOMES, type VerdictOutcome } from './egress-cache-counters.js';

export function outcomeOf(verdict: EgressVerdict): VerdictOutcome {
  if (verdict.kind !== 'deny') return 'allowed';
  return Object.hasOwn(EGRESS_OUTCOMES, verdict.outcome) ? (verdict.outcome as EgressOutcome) : 'other';
}

export type DecisionCount = 'slowPaths' | 'failed';

/** The decider's own counters: slow paths run and failed, and verdicts a slow path gave that were not cached. */
export class DecisionTallies {
  /** The decider's tallies of `EGRESS_CACHE_STATS`: `slowPaths`, `failed`, `notCached` by outcome. */
  readonly #counts: DecisionCounts = decisionCounts();
  readonly #sinceReset = new SinceReset(() => this.#counts);
  #active = 0;

  /** Slow paths in flight now. */
  get active(): number {
    return this.#active;
  }

  slowPathStarted(): void {
    this.#counts.slowPaths++;
    this.#active += 1;
  }

  slowPathEnded(): void {
    this.#active -= 1;
  }

  failed(): void {
    this.#counts.failed++;
  }

  notCached(verdict: EgressVerdict): void {
    this.#counts.notCached[outcomeOf(verdict)]++;
  }

  stats(): Record<DecisionCount, number> & { readonly notCached: Record<VerdictOutcome, number> } {
    return this.#sinceReset.current();
  }

  lifetimeStats(): Record<DecisionCount, number> & { readonly notCached: Record<VerdictOutcome, number> } {
    return { ...this.#counts, notCached: { ...this.#counts.notCached } };
  }

  resetStats(): void {
    this.#sinceReset.reset();
  }
}

/** `slowPath` counted: run, and failed when it rejects. */
function counted(tallies: DecisionTallies, slowPath: () => Promise<Resolution>): () => Promise<Resolution> {
  return async () => {
    tallies.slowPathStarted();
    try {
      return await slowPath();
    } catch (err) {
      tallies.failed();
      throw err;
    } finally {
      tallies.slowPathEnded();
    }
  };
}

/** A lease made for a verdict no entry holds: `ttlMs` from now, never past the certificate's NotAfter. */
export function leaseFor(nowMs: number, ttlMs: number, certNotAfterMs: number, generation = 0): Lease {
  return { origin: LOCAL_ORIGIN, generation, expiresAtMs: Math.min(nowMs + ttlMs, certNotAfterMs) };
}

const leaseOfEntry = (entry: CachedVerdict): Lease => ({ origin: entry.origin, generation: entry.generation, expiresAtMs: entry.expiresAtMs });

/** A decision, its lease named only when there is one. */
const decision = (verdict: EgressVerdict, cache: EgressCacheUse, lease: Lease | undefined): Decision => (lease === undefined ? { verdict, cache } : { verdict, cache, lease });

/** Cache on. Hits, misses and joins are counted by the cache; a slow path's verdict not stored here. */
export function cachedDecider(cache: EgressVerdictCache, tallies: DecisionTallies, news?: VerdictNews): EgressDecider {
  const resolve = async (key: EgressKey, certNotAfterMs: number, slowPath: () => Promise<Resolution>): Promise<Decision> => {
    const { verdict, source, stored, entry } = await cache.resolveOnce(key, certNotAfterMs, counted(tallies, slowPath));
    const lease = !opensTunnels(verdict) ? undefined : entry !== undefined ? leaseOfEntry(entry) : leaseFor(cache.now(), cache.ttlMs, certNotAfterMs);
    if (source === 'joined') return decision(verdict, 'joined', lease);
    if (!stored) tallies.notCached(verdict);
    news?.learned(key, verdict, lease);
    return decision(verdict, 'miss', lease);
  };
  return {
    ttlMs: cache.ttlMs,
    async decide(key, certNotAfterMs, slowPath) {
      const found = cache.lookup(key);
      if (found.kind === 'hit') return decision(found.entry.verdict, 'hit', opensTunnels(found.entry.verdict) ? leaseOfEntry(found.entry) : undefined);
      return resolve(key, certNotAfterMs, slowPath);
    },
    revalidate: resolve,
  };
}

export interface UncachedDeciderOptions {
  /** `--egress-cache-ttl-ms`: how long a lease lasts (default 5000). */
  readonly ttlMs?: number;
  readonly news?: VerdictNews;
  /** Wall clock (default `Date.now`). */
  readonly now?: () => number;
}

/** Cache off: the slow path every time, nothing stored (its verdicts are not counted as not cached). */
export function uncachedDecider(tallies: DecisionTallies, opts: UncachedDeciderOptions = {}): EgressDecider {
  const ttlMs = opts.ttlMs ?? 5000;
  const now = opts.now ?? Date.now;
  let generation = 0;
  const ask = async (key: EgressKey, certNotAfterMs: number, slowPath: () => Promise<Resolution>): Promise<Decision> => {
    const { verdict } = await counted(tallies, slowPath)();
    const lease = opensTunnels(verdict) ? leaseFor(now(), ttlMs, certNotAfterMs, ++generation) : undefined;
    opts.news?.learned(key, verdict, lease);
    return decision(verdict, 'off', lease);
  };
  return { ttlMs, decide: ask, revalidate: ask };
}
