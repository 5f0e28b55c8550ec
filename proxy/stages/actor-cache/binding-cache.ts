/**
 * The actor-binding cache: `atespace/name` → the literal `ip:port` of the worker that last served the actor.
 *
 * A bounded LRU (lru-cache) with a fixed TTL from the moment a binding is learned (hits never extend it). Every
 * binding carries a generation number, unique across the cache, and eviction names the generation it means:
 * a request evicts only the binding it used, so a late stale answer can never delete a newer binding another
 * request learned meanwhile. The cache counts hits, misses and evictions by reason; it knows nothing about HTTP,
 * filters or metrics libraries.
 */
import { LRUCache } from 'lru-cache';
import { SinceReset } from '../../../lib/since-reset.js';
import { isLiteralAddress } from '../../upstream/route-address.js';

export { isLiteralAddress };

/** Why a binding left the cache. `stale|connect|reset` come from requests, `ttl|lru` from the cache itself. */
export type EvictionReason = 'stale' | 'connect' | 'reset' | 'ttl' | 'lru' | 'admin';
export const EVICTION_REASONS: readonly EvictionReason[] = Object.freeze(['stale', 'connect', 'reset', 'ttl', 'lru', 'admin']);

export interface Binding {
  /** Literal `ip:port` (IPv6 in brackets). */
  readonly address: string;
  readonly generation: number;
  /** Clock time the binding was learned and when it stops being served (milliseconds, the cache's clock). */
  readonly learnedAt: number;
  readonly expiresAt: number;
}

export type CacheLookup = { readonly kind: 'hit'; readonly binding: Binding } | { readonly kind: 'miss' };

export interface CacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly entries: number;
  readonly evictions: Readonly<Record<EvictionReason, number>>;
}

export interface BindingCacheOptions {
  /** How long a learned binding is served; 0 stores nothing (every lookup misses). */
  readonly ttlMs: number;
  /** The LRU bound. */
  readonly maxEntries: number;
  /** Millisecond clock (tests inject one); default `performance`. */
  readonly clock?: { now(): number };
}

export interface CacheDump {
  readonly entries: number;
  readonly truncated: boolean;
  readonly bindings: readonly { readonly key: string; readonly address: string; readonly generation: number; readonly expiresInMs: number }[];
}

function zeroEvictions(): Record<EvictionReason, number> {
  return { stale: 0, connect: 0, reset: 0, ttl: 0, lru: 0, admin: 0 };
}

export class BindingCache {
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly #clock: { now(): number };
  readonly #lru: LRUCache<string, Binding>;
  #nextGeneration = 1;
  #hits = 0;
  #misses = 0;
  #evictions = zeroEvictions();
  readonly #sinceReset = new SinceReset(() => ({ hits: this.#hits, misses: this.#misses, evictions: this.#evictions }));

  constructor(opts: BindingCacheOptions) {
    if (!Number.isInteger(opts.maxEntries) || opts.maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
    if (!(opts.ttlMs >= 0)) throw new RangeError('ttlMs must be >= 0');
    this.ttlMs = opts.ttlMs;
    this.maxEntries = opts.maxEntries;
    this.#clock = opts.clock ?? performance;
    this.#lru = new LRUCache<string, Binding>({
      max: opts.maxEntries,
      // lru-cache treats ttl 0 as "no TTL"; with ttlMs 0 nothing is ever stored (see learn()).
      ttl: Math.max(1, opts.ttlMs),
      ttlResolution: 0,
      updateAgeOnGet: false,
      updateAgeOnHas: false,
      allowStale: false,
      perf: this.#clock,
      // Only the cache's own removals are counted here; request and admin evictions count themselves.
      dispose: (_value, _key, reason) => {
        if (reason === 'evict') this.#evictions.lru += 1;
        else if (reason === 'expire') this.#evictions.ttl += 1;
      },
    });
  }

  /** The live binding for `key` (an expired one is removed and counted as `ttl`). Counts a hit or a miss. */
  lookup(key: string): CacheLookup {
    let binding = this.#lru.get(key);
    if (binding !== undefined && this.#clock.now() >= binding.expiresAt) {
      // lru-cache expires strictly after the TTL; a binding is served for exactly ttlMs.
      this.#lru.delete(key);
      this.#evictions.ttl += 1;
      binding = undefined;
    }
    if (binding === undefined) {
      this.#misses += 1;
      return { kind: 'miss' };
    }
    this.#hits += 1;
    return { kind: 'hit', binding };
  }

  /** The live binding for `key` without counting or touching recency. */
  peek(key: string): Binding | undefined {
    return this.#lru.peek(key);
  }

  /**
   * Stores `key → address` for the TTL under a fresh generation and returns it; replaces any older binding.
   * Returns undefined (and stores nothing) for an address that is not a literal `ip:port`, or when the TTL is 0.
   */
  learn(key: string, address: string): Binding | undefined {
    if (this.ttlMs === 0 || !isLiteralAddress(address)) return undefined;
    const now = this.#clock.now();
    const binding: Binding = Object.freeze({
      address,
      generation: this.#nextGeneration++,
      learnedAt: now,
      expiresAt: now + this.ttlMs,
    });
    this.#lru.set(key, binding);
    return binding;
  }

  /**
   * Removes `key` only if its binding is still `generation` (the one the caller used) and counts the eviction.
   * Returns false, changing nothing, when the binding is gone or newer.
   */
  evict(key: string, generation: number, reason: EvictionReason): boolean {
    const current = this.#lru.peek(key, { allowStale: true });
    if (current === undefined || current.generation !== generation) return false;
    this.#lru.delete(key);
    this.#evictions[reason] += 1;
    return true;
  }

  /** Removes `key` whatever its generation (admin). */
  remove(key: string, reason: EvictionReason = 'admin'): boolean {
    if (!this.#lru.has(key)) {
      this.#lru.delete(key); // drops an expired leftover without counting it
      return false;
    }
    this.#lru.delete(key);
    this.#evictions[reason] += 1;
    return true;
  }

  /** Removes every live binding (admin); returns how many. */
  clear(reason: EvictionReason = 'admin'): number {
    this.#lru.purgeStale();
    const n = this.#lru.size;
    this.#lru.clear();
    this.#evictions[reason] += n;
    return n;
  }

  /** Live bindings, most recently used first, at most `limit`. */
  dump(limit: number): CacheDump {
    this.#lru.purgeStale();
    const now = this.#clock.now();
    const bindings: CacheDump['bindings'][number][] = [];
    for (const [key, b] of this.#lru.entries()) {
      if (bindings.length >= limit) break;
      bindings.push({ key, address: b.address, generation: b.generation, expiresInMs: Math.max(0, Math.round(b.expiresAt - now)) });
    }
    return { entries: this.#lru.size, truncated: this.#lru.size > bindings.length, bindings };
  }

  /** Live entries (expired ones are purged first, and counted as `ttl`). */
  get size(): number {
    this.#lru.purgeStale();
    return this.#lru.size;
  }

  /** Counters since the last `resetStats()` (the `/stats` view). */
  stats(): CacheStats {
    const d = this.#sinceReset.current();
    return { hits: d.hits, misses: d.misses, entries: this.size, evictions: d.evictions };
  }

  /** Counters since the cache was made; they never go down (the Prometheus view). */
  lifetimeStats(): CacheStats {
    return { hits: this.#hits, misses: this.#misses, entries: this.size, evictions: { ...this.#evictions } };
  }

  /** Starts the `/stats` counters from zero again (lifetime counters and bindings are kept). */
  resetStats(): void {
    this.#sinceReset.reset();
  }
}
