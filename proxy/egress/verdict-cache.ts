/**
 * The egress verdict cache: (an actor certificate's digest, a destination) → the verdict the slow path gave for a
 * CONNECT from that certificate to that destination. Keyed by the certificate, never by the actor's name, so an
 * entry belongs to one activation: a recreated actor presents a new certificate and never meets its predecessor's
 * verdicts.
 *
 * - Bounded: an LRU (lru-cache) of `maxEntries`; the bound pushes out the least recently used entry in O(1).
 * - An entry lives until min(stored + `ttlMs`, the certificate's NotAfter); a hit never extends it; an expired entry
 *   is a miss (and is removed when met).
 * - Singleflight per key (`resolveOnce`): concurrent misses share one resolution. A resolution that fails is handed
 *   to every caller that shared it and stores nothing; one that says `cacheable: false` is handed out, not stored;
 *   one that an eviction matched while it was in flight is handed out, not stored (it may predate what the eviction
 *   was for).
 * - Every verdict is named by its origin (0: this process, else the id of the process that stored it) and that
 *   origin's generation, increasing per origin: what lets several processes keep one table (`shared-verdicts.ts`).
 *   A subscriber hears this process's own stores and admin evictions; `adopt` and `drop` apply the others'.
 * - An entry is also a lease (`Lease`): the tunnels an allow opened are re-validated before it runs out
 *   (`grants.ts`), and an eviction may say that the tunnels it matches are to be closed (`closes`).
 *
 * Knows nothing of HTTP, TLS or ext_proc: a verdict is data, a resolution a promise.
 */
import { LRUCache } from 'lru-cache';
import type { HostnameCandidate } from '../../lib/egress/policy.js';
import { SinceReset } from '../../lib/since-reset.js';
import { verdictCounts, type VerdictCounts } from './egress-cache-counters.js';

export interface EgressKey {
  /** sha256 of the actor certificate's DER, lowercase hex. */
  readonly certDigest: string;
  /** "IP:port" as the CONNECT named it, normalised. */
  readonly destination: string;
  /**
   * The certificate's actor (from its URI SAN; the same for every key with this digest). Not part of the key's
   * identity: it lets an eviction by actor, and the admin listing, name the actor of a denied verdict too.
   */
  readonly actor: { readonly atespace: string; readonly name: string };
}

export type EgressVerdict =
  | { readonly kind: 'allow'; readonly actorId: string; readonly atespace: string; readonly name: string; readonly rule: number }
  /** Decided on the traffic: the rules (policy order) whose hostname patterns may allow it (lib/egress/policy.ts). */
  | { readonly kind: 'hostnames'; readonly actorId: string; readonly atespace: string; readonly name: string; readonly rules: readonly HostnameCandidate[] }
  | { readonly kind: 'deny'; readonly status: number; readonly body: string; readonly outcome: string };

export interface CachedVerdict {
  readonly verdict: EgressVerdict;
  /** The cache's clock (wall-clock milliseconds by default, comparable with a certificate's NotAfter). */
  readonly expiresAtMs: number;
  /** 0: stored by this process; else the id of the process that stored it. */
  readonly origin: number;
  /** The origin's generation of this verdict (increasing per origin). */
  readonly generation: number;
}

/** What a verdict promises, and until when: the entry that granted a tunnel (`grants.ts`). */
export type Lease = Pick<CachedVerdict, 'origin' | 'generation' | 'expiresAtMs'>;

export type VerdictLookup = { readonly kind: 'hit'; readonly entry: CachedVerdict } | { readonly kind: 'miss' };

/** What a resolution decided: the verdict, and whether it may be cached. */
export interface Resolution {
  readonly verdict: EgressVerdict;
  readonly cacheable: boolean;
}

/** Which verdicts an eviction means: every given field must match (`{}`: every verdict). */
export interface VerdictFilter {
  readonly certDigest?: string;
  readonly atespace?: string;
  readonly name?: string;
}

/**
 * Why a verdict left the cache before it expired: this process's admin, another process's eviction, the LRU bound,
 * or its actor found not running or unknown while this process held tunnels of its certificate (`revoked`).
 */
export type EvictionReason = 'admin' | 'peer' | 'lru' | 'revoked';

export type VerdictCount = 'hits' | 'misses' | 'joined' | 'stored' | 'expired';

export const LOCAL_ORIGIN = 0;

/**
 * What a subscriber hears: a verdict this process stored, or an admin eviction this process made (`closes`: the
 * tunnels it matches are closed too, for that reason — `revocation.ts`).
 */
export type VerdictEvent =
  | { readonly kind: 'stored'; readonly key: EgressKey; readonly verdict: EgressVerdict; readonly generation: number; readonly expiresAtMs: number }
  | { readonly kind: 'evicted'; readonly filter: VerdictFilter; readonly closes?: EvictionCloses };

/** Why an eviction closes the tunnels it matches (a subset of `EgressRevocation`, kept here as data). */
export type EvictionCloses = 'revoked-admin' | 'revoked-not-running' | 'revoked-unknown';

export interface VerdictCacheOptions {
  readonly maxEntries: number;
  /** How long a stored verdict is served at most (> 0). */
  readonly ttlMs: number;
  /** Millisecond clock (tests inject one); default `Date.now` (a certificate's NotAfter is wall-clock time). */
  readonly now?: () => number;
}

/** A stored verdict: the fixed facts, and the hits it served. */
class Entry implements CachedVerdict {
  hits = 0;
  constructor(
    readonly key: EgressKey,
    readonly verdict: EgressVerdict,
    readonly storedAtMs: number,
    readonly expiresAtMs: number,
    readonly origin: number,
    readonly generation: number,
  ) {}
}

/** What a resolution gave: the verdict, and the entry it stored (none: not stored). */
interface FlightResult {
  readonly verdict: EgressVerdict;
  readonly stored: boolean;
  readonly entry: CachedVerdict | undefined;
}

/** One resolution in flight: its result, its key, and whether an eviction matched it meanwhile. */
interface Flight {
  readonly key: EgressKey;
  readonly result: Promise<FlightResult>;
  tainted: boolean;
}

/** The table's key of an EgressKey (a digest is hex and a destination has no space). */
export function keyId(key: Pick<EgressKey, 'certDigest' | 'destination'>): string {
  return `${key.certDigest} ${key.destination}`;
}

export function matchesFilter(filter: VerdictFilter, key: EgressKey): boolean {
  return (
    (filter.certDigest === undefined || filter.certDigest === key.certDigest) &&
    (filter.atespace === undefined || filter.atespace === key.actor.atespace) &&
    (filter.name === undefined || filter.name === key.actor.name)
  );
}

export class EgressVerdictCache {
  readonly maxEntries: number;
  readonly ttlMs: number;
  readonly #now: () => number;
  readonly #lru: LRUCache<string, Entry>;
  readonly #flights = new Map<string, Flight>();
  /** Hits, misses, joins, stores, expiries and evictions by reason: the verdict cache's tallies of `EGRESS_CACHE_STATS`. */
  readonly #counts: VerdictCounts = verdictCounts();
  readonly #evictions = this.#counts.evictions;
  readonly #sinceReset = new SinceReset(() => this.#counts);
  #generation = 0;
  #subscriber: ((event: VerdictEvent) => void) | undefined;

  constructor(opts: VerdictCacheOptions) {
    if (!Number.isInteger(opts.maxEntries) || opts.maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
    if (!(opts.ttlMs > 0)) throw new RangeError('ttlMs must be > 0');
    this.maxEntries = opts.maxEntries;
    this.ttlMs = opts.ttlMs;
    this.#now = opts.now ?? Date.now;
    // Expiry is each entry's own `expiresAtMs`, checked when the entry is met; the LRU only bounds the table.
    this.#lru = new LRUCache<string, Entry>({
      max: opts.maxEntries,
      dispose: (_entry, _key, reason) => {
        if (reason === 'evict') this.#evictions.lru++;
      },
    });
  }

  /** The live verdict for `key` (an expired one is removed and counted as `expired`). Counts a hit or a miss. */
  lookup(key: EgressKey): VerdictLookup {
    const entry = this.#live(keyId(key), this.#now());
    if (entry === undefined) {
      this.#counts.misses++;
      return { kind: 'miss' };
    }
    this.#counts.hits++;
    entry.hits += 1;
    return { kind: 'hit', entry };
  }

  #live(id: string, now: number): Entry | undefined {
    const entry = this.#lru.get(id);
    if (entry !== undefined && now >= entry.expiresAtMs) {
      this.#lru.delete(id);
      this.#counts.expired++;
      return undefined;
    }
    return entry;
  }

  /**
   * Stores a cacheable verdict until min(now + ttl, certNotAfterMs) under a fresh generation, replacing any older
   * one; ignored (false) when that is already past.
   */
  store(key: EgressKey, verdict: EgressVerdict, certNotAfterMs: number): boolean {
    return this.#store(key, verdict, certNotAfterMs) !== undefined;
  }

  #store(key: EgressKey, verdict: EgressVerdict, certNotAfterMs: number): Entry | undefined {
    const now = this.#now();
    const expiresAtMs = Math.min(now + this.ttlMs, certNotAfterMs);
    if (!(expiresAtMs > now)) return undefined;
    const generation = ++this.#generation;
    const entry = new Entry(key, verdict, now, expiresAtMs, LOCAL_ORIGIN, generation);
    this.#lru.set(keyId(key), entry);
    this.#counts.stored++;
    this.#subscriber?.({ kind: 'stored', key, verdict, generation, expiresAtMs });
    return entry;
  }

  /**
   * Concurrent misses for one key share one resolution: `resolve` runs once per key at a time and every caller gets
   * its result (`leader`: the caller whose `resolve` ran; `joined`: the others), or its rejection. The result is
   * stored when it says `cacheable` and no eviction matched the key while it was in flight (`stored` says so, and
   * `entry` is what was stored).
   */
  resolveOnce(
    key: EgressKey,
    certNotAfterMs: number,
    resolve: () => Promise<Resolution>,
  ): Promise<FlightResult & { readonly source: 'leader' | 'joined' }> {
    const id = keyId(key);
    const inFlight = this.#flights.get(id);
    if (inFlight !== undefined) {
      this.#counts.joined++;
      return inFlight.result.then((r) => ({ ...r, source: 'joined' as const }));
    }
    const settled = (): void => {
      if (this.#flights.get(id) === flight) this.#flights.delete(id);
    };
    const flight: Flight = {
      key,
      tainted: false,
      result: (async () => resolve())().then(
        (r) => {
          settled();
          const entry = r.cacheable && !flight.tainted ? this.#store(key, r.verdict, certNotAfterMs) : undefined;
          return { verdict: r.verdict, stored: entry !== undefined, entry };
        },
        (err: unknown) => {
          settled();
          throw err;
        },
      ),
    };
    this.#flights.set(id, flight);
    return flight.result.then((r) => ({ ...r, source: 'leader' as const }));
  }

  /**
   * Removes every live verdict `filter` matches (`{}`: all) and counts them as `admin` evictions (`revoked` when
   * the actor's state closes them); resolutions in flight for a matching key will not be stored. The subscriber
   * hears the eviction (with `closes`: the tunnels it matches are to be closed in every process). Returns how many
   * went.
   */
  evict(filter: VerdictFilter, closes?: EvictionCloses): number {
    const removed = this.#remove(filter, () => true, closes === undefined || closes === 'revoked-admin' ? 'admin' : 'revoked');
    this.#subscriber?.(closes === undefined ? { kind: 'evicted', filter } : { kind: 'evicted', filter, closes });
    return removed;
  }

  /**
   * Another process evicted `filter`: removes the matching verdicts it knew of (`covers(origin, generation)`, with
   * this process's own verdicts as origin 0), counted as `peer`; resolutions in flight for a matching key will not
   * be stored. Nothing is heard by the subscriber. Returns how many went.
   */
  drop(filter: VerdictFilter, covers: (origin: number, generation: number) => boolean): number {
    return this.#remove(filter, covers, 'peer');
  }

  #remove(filter: VerdictFilter, covers: (origin: number, generation: number) => boolean, reason: EvictionReason): number {
    for (const flight of this.#flights.values()) if (matchesFilter(filter, flight.key)) flight.tainted = true;
    const now = this.#now();
    let removed = 0;
    for (const [id, entry] of [...this.#lru.entries()]) {
      if (!matchesFilter(filter, entry.key) || !covers(entry.origin, entry.generation)) continue;
      this.#lru.delete(id);
      if (now >= entry.expiresAtMs) {
        this.#counts.expired++;
      } else {
        this.#evictions[reason]++;
        removed += 1;
      }
    }
    return removed;
  }

  /**
   * Another process stored `verdict` for `key` (its `origin`/`generation`, expiring at `expiresAtMs` on the same
   * clock): stores it, never past now + ttl, unless it has expired or the current verdict comes from the same origin
   * with a generation at least as new. Returns whether it was stored. Nothing is heard by the subscriber.
   */
  adopt(key: EgressKey, verdict: EgressVerdict, origin: number, generation: number, expiresAtMs: number): boolean {
    return this.adoptEntry(key, verdict, origin, generation, expiresAtMs) !== undefined;
  }

  /** `adopt`, answering the entry it stored (undefined: not stored). */
  adoptEntry(key: EgressKey, verdict: EgressVerdict, origin: number, generation: number, expiresAtMs: number): CachedVerdict | undefined {
    const now = this.#now();
    const until = Math.min(expiresAtMs, now + this.ttlMs);
    if (!(until > now)) return undefined;
    const id = keyId(key);
    const current = this.#lru.peek(id);
    if (current !== undefined && current.origin === origin && current.generation >= generation) return undefined;
    const entry = new Entry(key, verdict, now, until, origin, generation);
    this.#lru.set(id, entry);
    return entry;
  }

  /** One subscriber hears this process's own stores and admin evictions (the shared table); undefined stops it. */
  subscribe(subscriber: ((event: VerdictEvent) => void) | undefined): void {
    this.#subscriber = subscriber;
  }

  /** The generation of this process's latest stored verdict (0: none yet). */
  get latestGeneration(): number {
    return this.#generation;
  }

  /** Live verdicts, most recently used first (expired ones are removed first, counted as `expired`; O(entries)). */
  entries(): readonly { key: EgressKey; entry: CachedVerdict & { readonly hits: number; readonly storedAtMs: number } }[] {
    this.#purgeExpired();
    return [...this.#lru.values()].map((entry) => ({ key: entry.key, entry }));
  }

  #purgeExpired(): void {
    const now = this.#now();
    const expired: string[] = [];
    for (const [id, entry] of this.#lru.entries()) if (now >= entry.expiresAtMs) expired.push(id);
    for (const id of expired) {
      this.#lru.delete(id);
      this.#counts.expired++;
    }
  }

  /** Live entries (expired ones are removed first). */
  get size(): number {
    this.#purgeExpired();
    return this.#lru.size;
  }

  /** Resolutions in flight. */
  get inFlight(): number {
    return this.#flights.size;
  }

  /** The cache's clock. */
  now(): number {
    return this.#now();
  }

  /** Counters since the last `resetStats()`. */
  stats(): Record<VerdictCount, number> & { readonly evictions: Record<EvictionReason, number> } {
    return this.#sinceReset.current();
  }

  /** Counters since the cache was made (Prometheus). */
  lifetimeStats(): Record<VerdictCount, number> & { readonly evictions: Record<EvictionReason, number> } {
    return structuredClone(this.#counts);
  }

  resetStats(): void {
    this.#sinceReset.reset();
  }
}
