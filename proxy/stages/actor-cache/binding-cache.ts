/**
 * The actor-binding cache: `atespace/name` → the literal `ip:port` of the worker that last served the actor.
 *
 * A bounded LRU (lru-cache) with a fixed TTL from the moment a binding is learned (hits never extend it). Every
 * binding carries a generation number, unique across the cache and increasing, and eviction names the generation
 * it means: a request evicts only the binding it used, so a late stale answer can never delete a newer binding
 * another request learned meanwhile. Evicting every binding to one worker address (`evictWorker`) is guarded the
 * same way, per entry: only bindings learned before the caller's generation mark go.
 *
 * Refresh-ahead bookkeeping lives here too, as plain time and state: a binding becomes due for a refresh in the
 * last `refreshAheadFraction` of its TTL; `claimRefresh` lets one refresher have it, `renew` replaces it with the
 * re-validated address (a fresh generation, one more TTL from its current expiry) and `refreshFailed` leaves it to
 * expire. The cache counts hits, misses and evictions by reason; it knows nothing about HTTP, filters, ext_proc or
 * metrics libraries.
 *
 * Sharing (several processes, one table): a subscriber hears every binding this process learns or renews and every
 * binding it evicts for a reason of its own use (`stale|connect|reset|identity|worker`), each named by its origin (0: this
 * process) and the origin's generation. Another process's events come back through `adopt` and `drop`, guarded by
 * that same pair: a binding from an origin never replaces a newer one from that origin, and a drop removes only the
 * binding it names. Bindings adopted from elsewhere become due for a refresh only in the second half of the refresh
 * window, so the process that learned a binding in use refreshes it first and the others just adopt the renewal.
 */
import { LRUCache } from 'lru-cache';
import { SinceReset } from '../../../lib/since-reset.js';
import { lookupTallies, type LookupTallies } from './counters.js';
import { isLiteralAddress } from '../../http/route-address.js';

export { isLiteralAddress };

/**
 * Why a binding left the cache. `stale|connect|reset` come from the request that used it, `worker` from a connect
 * failure to its worker seen by another request, `ttl|lru` from the cache itself, `admin` from the admin API.
 */
/** Why a binding was removed (the `reason` label of `cache.evictions`, declared in `CACHE_STATS`). */
export type EvictionReason = keyof LookupTallies['evictions'];

/** Where a binding is with refresh-ahead: not refreshed yet, a refresh in flight, or a refresh that failed. */
export type RefreshState = 'idle' | 'in-flight' | 'failed';

export interface Binding {
  /** Literal `ip:port` (IPv6 in brackets). */
  readonly address: string;
  readonly generation: number;
  /** Clock time the binding was learned and when it stops being served (milliseconds, the cache's clock). */
  readonly learnedAt: number;
  readonly expiresAt: number;
  /** From this clock time a hit makes the binding due for a refresh (Infinity: never). */
  readonly refreshAt: number;
  /** Request-path hits this binding served. */
  readonly hits: number;
  readonly refresh: RefreshState;
}

/** Where a binding came from: 0 for this process, else the id of the process that learned it. */
export type Origin = number;
export const LOCAL_ORIGIN: Origin = 0;

/** What a subscriber hears: a binding this process learned (or renewed), or one it evicted through use. */
export type BindingEvent =
  | { readonly kind: 'learned'; readonly key: string; readonly address: string; readonly origin: Origin; readonly originGeneration: number; readonly ttlLeftMs: number }
  | { readonly kind: 'evicted'; readonly key: string; readonly origin: Origin; readonly originGeneration: number; readonly reason: EvictionReason };

/** `refreshDue`: the hit fell in the refresh window and no refresh was claimed for this binding yet. */
export type CacheLookup = { readonly kind: 'hit'; readonly binding: Binding; readonly refreshDue: boolean } | { readonly kind: 'miss' };

/** The binding table's tallies (hits, misses, evictions by reason) and its live entries. */
export type CacheStats = Readonly<LookupTallies> & { readonly entries: number };

export interface BindingCacheOptions {
  /** How long a learned binding is served; 0 stores nothing (every lookup misses). */
  readonly ttlMs: number;
  /** The LRU bound. */
  readonly maxEntries: number;
  /** A hit in the last this-much of a binding's TTL makes it due for a refresh; 0 (default): never. */
  readonly refreshAheadFraction?: number;
  /** Millisecond clock (tests inject one); default `performance`, in whole milliseconds. */
  readonly clock?: { now(): number };
}

/** The host part of a literal `ip:port` (IPv6 without its brackets). */
export function hostOfAddress(address: string): string {
  return address.startsWith('[') ? address.slice(1, address.indexOf(']')) : address.slice(0, address.lastIndexOf(':'));
}

/** Whether `address` is on `worker` (an IP: any port; a literal `ip:port`: exactly). */
export function onWorker(address: string, worker: string): boolean {
  return isLiteralAddress(worker) ? address === worker : hostOfAddress(address) === worker.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/** `refreshFrom` of a binding that is never refreshed. */
const NEVER = -1;

/**
 * A stored binding: fixed facts plus the two things that change while it lives. Every field holds a small integer
 * or a shared string (times in whole milliseconds, "never" as -1, the address string shared by every binding to
 * that worker), so an entry is one small object: the table's size per binding is mostly this, the key and the LRU.
 */
class Entry implements Binding {
  hits = 0;
  refresh: RefreshState = 'idle';
  constructor(
    readonly address: string,
    readonly generation: number,
    readonly learnedAt: number,
    readonly expiresAt: number,
    readonly refreshFrom: number,
    readonly origin: Origin,
    readonly originGeneration: number,
  ) {}

  get refreshAt(): number {
    return this.refreshFrom === NEVER ? Infinity : this.refreshFrom;
  }
}

/** The bindings to one worker, and the one copy of its address string they share. */
interface AddressKeys {
  readonly address: string;
  readonly keys: Set<string>;
}

/** `performance.now()` in whole milliseconds. */
const WHOLE_MS_CLOCK = { now: (): number => Math.floor(performance.now()) };

export class BindingCache {
  readonly ttlMs: number;
  readonly maxEntries: number;
  /** How long before expiry a binding in use becomes due for a refresh (0: never). */
  readonly refreshWindowMs: number;
  readonly #clock: { now(): number };
  readonly #lru: LRUCache<string, Entry>;
  /** Worker address → keys bound to it (every stored entry is here exactly once; bounded by the LRU). */
  readonly #byAddress = new Map<string, AddressKeys>();
  #nextGeneration = 1;
  #subscriber: ((event: BindingEvent) => void) | undefined;
  /** Hits, misses and evictions by reason: the tallies `CACHE_STATS` declares for the table. */
  readonly #tallies = lookupTallies();
  readonly #evictions = this.#tallies.evictions;
  readonly #sinceReset = new SinceReset(() => this.#tallies);

  constructor(opts: BindingCacheOptions) {
    if (!Number.isInteger(opts.maxEntries) || opts.maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
    if (!(opts.ttlMs >= 0)) throw new RangeError('ttlMs must be >= 0');
    const fraction = opts.refreshAheadFraction ?? 0;
    if (!(fraction >= 0 && fraction < 1)) throw new RangeError('refreshAheadFraction must be in [0, 1)');
    this.ttlMs = opts.ttlMs;
    this.maxEntries = opts.maxEntries;
    this.refreshWindowMs = fraction * opts.ttlMs;
    this.#clock = opts.clock ?? WHOLE_MS_CLOCK;
    // The LRU bounds the table; expiry is the entry's own `expiresAt`, checked here (lru-cache's TTL would add two
    // numbers per entry and a clock read per lookup). With ttlMs 0 nothing is ever stored (see learn()).
    this.#lru = new LRUCache<string, Entry>({
      max: opts.maxEntries,
      // Every removal (replaced, deleted, pushed out) leaves the address index. Only the LRU bound is counted
      // here; expiry, request, worker and admin evictions count themselves.
      dispose: (entry, key, reason) => {
        this.#unindex(entry.address, key);
        if (reason === 'evict') this.#evictions.lru += 1;
      },
    });
  }

  /** The live binding for `key` (an expired one is removed and counted as `ttl`). Counts a hit or a miss. */
  lookup(key: string): CacheLookup {
    const now = this.#clock.now();
    const entry = this.#live(key, now);
    if (entry === undefined) {
      this.#tallies.misses++;
      return { kind: 'miss' };
    }
    this.#tallies.hits++;
    entry.hits += 1;
    return { kind: 'hit', binding: entry, refreshDue: entry.refreshFrom !== NEVER && now >= entry.refreshFrom && entry.refresh === 'idle' };
  }

  /** The live binding for `key` without counting a hit or a miss (a request that waited for another's miss). */
  current(key: string): Binding | undefined {
    return this.#live(key, this.#clock.now());
  }

  #live(key: string, now: number): Entry | undefined {
    const entry = this.#lru.get(key);
    if (entry !== undefined && now >= entry.expiresAt) {
      this.#lru.delete(key);
      this.#evictions.ttl += 1;
      return undefined;
    }
    return entry;
  }

  /**
   * The generation the next learned binding will get: every binding stored now has a smaller one. A request
   * takes the mark when its attempt starts, so `evictWorker(address, mark)` spares bindings learned after that.
   */
  generationMark(): number {
    return this.#nextGeneration;
  }

  /**
   * Stores `key → address` for the TTL under a fresh generation and returns it; replaces any older binding.
   * Returns undefined (and stores nothing) for an address that is not a literal `ip:port`, or when the TTL is 0.
   */
  learn(key: string, address: string): Binding | undefined {
    if (this.ttlMs === 0 || !isLiteralAddress(address)) return undefined;
    const now = this.#clock.now();
    return this.#learned(key, this.#store(key, address, now, now + this.ttlMs), now);
  }

  /** One subscriber hears this process's own learns and use evictions (the shared table); undefined stops it. */
  subscribe(subscriber: ((event: BindingEvent) => void) | undefined): void {
    this.#subscriber = subscriber;
  }

  #learned(key: string, entry: Entry, now: number): Entry {
    this.#subscriber?.({ kind: 'learned', key, address: entry.address, origin: LOCAL_ORIGIN, originGeneration: entry.generation, ttlLeftMs: entry.expiresAt - now });
    return entry;
  }

  #evicted(key: string, entry: Entry, reason: EvictionReason): void {
    this.#subscriber?.({ kind: 'evicted', key, origin: entry.origin, originGeneration: entry.originGeneration, reason });
  }

  /**
   * Another process learned `key → address` (its binding `originGeneration`), live for `ttlLeftMs` more (at most
   * two TTLs: a renewal runs one TTL past the old expiry): stores it unless the current binding comes from the same origin with a generation at least as new.
   * Returns whether it was stored. Nothing is heard by the subscriber.
   */
  adopt(key: string, address: string, origin: Origin, originGeneration: number, ttlLeftMs: number): boolean {
    if (this.ttlMs === 0 || !(ttlLeftMs > 0) || !isLiteralAddress(address)) return false;
    const current = this.#lru.peek(key, { allowStale: true });
    if (current !== undefined && current.origin === origin && current.originGeneration >= originGeneration) return false;
    const now = this.#clock.now();
    this.#store(key, address, now, now + Math.min(ttlLeftMs, 2 * this.ttlMs), origin, originGeneration);
    return true;
  }

  /** Another process evicted `key`'s binding `origin`/`originGeneration`: removes it if it is the one stored here. */
  drop(key: string, origin: Origin, originGeneration: number): boolean {
    const current = this.#lru.peek(key, { allowStale: true });
    if (current === undefined || current.origin !== origin || current.originGeneration !== originGeneration) return false;
    this.#lru.delete(key);
    return true;
  }

  #store(key: string, address: string, now: number, expiresAt: number, origin: Origin = LOCAL_ORIGIN, originGeneration?: number): Entry {
    // An adopted binding waits for the second half of the refresh window: its origin refreshes it first.
    const window = origin === LOCAL_ORIGIN ? this.refreshWindowMs : this.refreshWindowMs / 2;
    const refreshFrom = window > 0 ? Math.max(0, Math.floor(expiresAt - window)) : NEVER;
    const generation = this.#nextGeneration++;
    const index = this.#byAddress.get(address) ?? { address, keys: new Set<string>() };
    const entry = new Entry(index.address, generation, now, expiresAt, refreshFrom, origin, originGeneration ?? generation);
    this.#lru.set(key, entry); // disposes (unindexes) the old one, which may drop `index` from the map
    if (this.#byAddress.get(address) !== index) this.#byAddress.set(address, index);
    index.keys.add(key);
    return entry;
  }

  #unindex(address: string, key: string): void {
    const index = this.#byAddress.get(address);
    if (index === undefined) return;
    index.keys.delete(key);
    if (index.keys.size === 0) this.#byAddress.delete(address);
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
    this.#evicted(key, current, reason);
    return true;
  }

  /**
   * A connect to `address` failed: removes every binding to it whose generation is below `mark` (learned before
   * the failing attempt began) and counts each as `worker`; bindings learned since survive. Returns how many went.
   */
  evictWorker(address: string, mark: number): number {
    const keys = this.#byAddress.get(address)?.keys;
    if (keys === undefined) return 0;
    const now = this.#clock.now();
    let evicted = 0;
    for (const key of [...keys]) {
      const entry = this.#lru.peek(key, { allowStale: true });
      if (entry === undefined || entry.address !== address || entry.generation >= mark) continue;
      this.#lru.delete(key);
      if (now >= entry.expiresAt) {
        this.#evictions.ttl += 1; // it had expired anyway
      } else {
        this.#evictions.worker += 1;
        evicted += 1;
        this.#evicted(key, entry, 'worker');
      }
    }
    return evicted;
  }

  /** Hands the refresh of `key`'s binding `generation` to one caller: true once, while it is live and idle. */
  claimRefresh(key: string, generation: number): boolean {
    const entry = this.#lru.peek(key);
    if (entry === undefined || entry.generation !== generation || entry.refresh !== 'idle') return false;
    if (this.#clock.now() >= entry.expiresAt) return false;
    entry.refresh = 'in-flight';
    return true;
  }

  /**
   * The refresh of `key`'s binding `generation` re-validated it at `address`: replaces it with a fresh generation
   * that expires one TTL after the old one did, so a binding in use is re-validated once per TTL. Returns
   * undefined, changing nothing, when that binding is gone, newer or expired, or the address is not literal.
   */
  renew(key: string, generation: number, address: string): Binding | undefined {
    const entry = this.#lru.peek(key);
    const now = this.#clock.now();
    if (entry === undefined || entry.generation !== generation || now >= entry.expiresAt || !isLiteralAddress(address)) return undefined;
    return this.#learned(key, this.#store(key, address, now, entry.expiresAt + this.ttlMs), now);
  }

  /** The refresh of `key`'s binding `generation` failed: the binding is served until it expires, never refreshed again. */
  refreshFailed(key: string, generation: number): void {
    const entry = this.#lru.peek(key, { allowStale: true });
    if (entry !== undefined && entry.generation === generation) entry.refresh = 'failed';
  }

  /** Removes `key` whatever its generation (an operator's eviction). */
  remove(key: string, reason: EvictionReason = 'admin'): boolean {
    const entry = this.#lru.peek(key);
    if (entry === undefined || this.#clock.now() >= entry.expiresAt) {
      this.#lru.delete(key); // drops an expired leftover without counting it
      return false;
    }
    this.#lru.delete(key);
    this.#evictions[reason] += 1;
    return true;
  }

  /** Removes every live binding (an operator's eviction); returns how many. */
  clear(reason: EvictionReason = 'admin'): number {
    this.#purgeExpired();
    const n = this.#lru.size;
    this.#lru.clear();
    this.#evictions[reason] += n;
    return n;
  }

  /**
   * Removes every live binding to `worker` (an IP: any port; a literal `ip:port`: exactly), for an operator
   * draining a node (like the operator's other evictions it stays in this process). Returns how many went.
   */
  removeWorker(worker: string, reason: EvictionReason = 'admin'): number {
    this.#purgeExpired();
    let removed = 0;
    for (const index of [...this.#byAddress.values()]) {
      if (!onWorker(index.address, worker)) continue;
      for (const key of [...index.keys]) {
        this.#lru.delete(key);
        removed += 1;
      }
    }
    this.#evictions[reason] += removed;
    return removed;
  }

  /** The cache's clock now (milliseconds): the time a binding's `learnedAt` and `expiresAt` are on. */
  now(): number {
    return this.#clock.now();
  }

  /** The live binding for `key` as it is: counts neither a hit nor a miss and keeps its place in the LRU order. */
  peek(key: string): Binding | undefined {
    const entry = this.#lru.peek(key);
    return entry === undefined || this.#clock.now() >= entry.expiresAt ? undefined : entry;
  }

  /**
   * Every live binding with its key, most recently used first (expired ones are purged first, counted as `ttl`);
   * counts neither a hit nor a miss and moves nothing in the LRU order (O(entries): never the request path).
   */
  *bindings(): IterableIterator<readonly [string, Binding]> {
    this.#purgeExpired();
    yield* this.#lru.entries();
  }

  /** Removes every expired binding, counted as `ttl` (O(entries): never the request path). */
  #purgeExpired(): void {
    const now = this.#clock.now();
    const expired: string[] = [];
    for (const [key, entry] of this.#lru.entries()) if (now >= entry.expiresAt) expired.push(key);
    for (const key of expired) this.#lru.delete(key);
    this.#evictions.ttl += expired.length;
  }

  /** Live entries (expired ones are purged first, and counted as `ttl`). */
  get size(): number {
    this.#purgeExpired();
    return this.#lru.size;
  }

  /** Worker addresses with at least one stored binding (the address index; for tests and bounds). */
  get workerAddresses(): number {
    return this.#byAddress.size;
  }

  /** Counters since the last `resetStats()` (the `/stats` view). */
  stats(): CacheStats {
    return { ...this.#sinceReset.current(), entries: this.size };
  }

  /** Counters since the cache was made; they never go down (the Prometheus view). */
  lifetimeStats(): CacheStats {
    return { ...structuredClone(this.#tallies), entries: this.size };
  }

  /** Starts the `/stats` counters from zero again (lifetime counters and bindings are kept). */
  resetStats(): void {
    this.#sinceReset.reset();
  }
}
