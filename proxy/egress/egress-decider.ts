/**
 * The egress decision in front of the slow path: with the verdict cache, a hit answers and a miss runs the slow path
 * once per key (concurrent misses share it) and caches what may be cached; without it, the slow path runs for every
 * CONNECT. Counts the slow paths run, the ones that failed, and the verdicts not cached by their outcome.
 */
import { EGRESS_OUTCOMES, type EgressOutcome } from '../../lib/egress/wire.js';
import { CounterSet, zeroCounts } from '../stages/actor-cache/counter-set.js';
import type { EgressKey, EgressVerdict, EgressVerdictCache, Resolution } from './verdict-cache.js';

export type EgressCacheUse = 'hit' | 'miss' | 'joined' | 'off';

export interface EgressDecider {
  /**
   * Cache on: a hit answers; a miss calls `slowPath` once per key (singleflight) and caches what may be cached.
   * Cache off: `slowPath` every time. A `slowPath` that rejects rejects every caller that shared it.
   */
  decide(key: EgressKey, certNotAfterMs: number, slowPath: () => Promise<Resolution>): Promise<{ verdict: EgressVerdict; cache: EgressCacheUse }>;
}

/** A verdict's outcome as a fixed label: the contract's outcomes (`allowed` for an allow), else `other`. */
export type VerdictOutcome = EgressOutcome | 'other';
export const VERDICT_OUTCOMES: readonly VerdictOutcome[] = Object.freeze([...(Object.keys(EGRESS_OUTCOMES) as EgressOutcome[]), 'other']);

export function outcomeOf(verdict: EgressVerdict): VerdictOutcome {
  if (verdict.kind !== 'deny') return 'allowed';
  return Object.hasOwn(EGRESS_OUTCOMES, verdict.outcome) ? (verdict.outcome as EgressOutcome) : 'other';
}

export type DecisionCount = 'slowPaths' | 'failed';
export const DECISION_COUNTS: readonly DecisionCount[] = Object.freeze(['slowPaths', 'failed']);

/** The decider's own counters: slow paths run and failed, and verdicts a slow path gave that were not cached. */
export class DecisionTallies {
  readonly #counts = new CounterSet<DecisionCount>(DECISION_COUNTS);
  readonly #notCached = new CounterSet<VerdictOutcome>(VERDICT_OUTCOMES);
  #active = 0;

  /** Slow paths in flight now. */
  get active(): number {
    return this.#active;
  }

  slowPathStarted(): void {
    this.#counts.inc('slowPaths');
    this.#active += 1;
  }

  slowPathEnded(): void {
    this.#active -= 1;
  }

  failed(): void {
    this.#counts.inc('failed');
  }

  notCached(verdict: EgressVerdict): void {
    this.#notCached.inc(outcomeOf(verdict));
  }

  stats(): Record<DecisionCount, number> & { readonly notCached: Record<VerdictOutcome, number> } {
    return { ...this.#counts.view(), notCached: this.#notCached.view() };
  }

  lifetimeStats(): Record<DecisionCount, number> & { readonly notCached: Record<VerdictOutcome, number> } {
    return { ...this.#counts.lifetime(), notCached: this.#notCached.lifetime() };
  }

  resetStats(): void {
    this.#counts.reset();
    this.#notCached.reset();
  }
}

export function zeroNotCached(): Record<VerdictOutcome, number> {
  return zeroCounts(VERDICT_OUTCOMES);
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

/** Cache on. Hits, misses and joins are counted by the cache; a slow path's verdict not stored here. */
export function cachedDecider(cache: EgressVerdictCache, tallies: DecisionTallies): EgressDecider {
  return {
    async decide(key, certNotAfterMs, slowPath) {
      const found = cache.lookup(key);
      if (found.kind === 'hit') return { verdict: found.entry.verdict, cache: 'hit' };
      const { verdict, source, stored } = await cache.resolveOnce(key, certNotAfterMs, counted(tallies, slowPath));
      if (source === 'joined') return { verdict, cache: 'joined' };
      if (!stored) tallies.notCached(verdict);
      return { verdict, cache: 'miss' };
    },
  };
}

/** Cache off: the slow path every time, nothing stored (its verdicts are not counted as not cached). */
export function uncachedDecider(tallies: DecisionTallies): EgressDecider {
  return {
    async decide(_key, _certNotAfterMs, slowPath) {
      const { verdict } = await counted(tallies, slowPath)();
      return { verdict, cache: 'off' };
    },
  };
}
