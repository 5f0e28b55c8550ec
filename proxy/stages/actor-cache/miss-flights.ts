/**
 * Miss coalescing: while one request's miss for an actor is in flight (its ext_proc round trip and its first
 * upstream answer), later misses for the same actor wait for the binding that miss learns instead of each
 * opening its own ext_proc stream.
 *
 * - The first miss leads a flight; the flight ends when the leader settles it: `learned` (its answer taught the
 *   cache) or `failed` (anything else: an immediate response, an error, a stale answer, a connect failure, its
 *   client gone). Followers then look the binding up, or — after a failure — each run their own slow path, so one
 *   request's failure is never handed to the others.
 * - A flight lasts at most `waitTimeoutMs` (the ext_proc message timeout): then its followers are released to
 *   their own slow path and the next miss leads a new flight, so a leader that never settles cannot hold anyone.
 * - A follower whose client goes away stops waiting at once and leaves the flight.
 *
 * Knows nothing about HTTP or the cache: keys are opaque strings.
 */
import { SinceReset } from '../../../lib/since-reset.js';
import { cacheTallies } from './counters.js';

/** How a follower's wait ended. */
export type WaitEnd = 'learned' | 'failed' | 'timeout' | 'gone';

/** What became of a follower: routed from the learned binding, sent on its own slow path, or its client left. */
export type CoalescedResult = 'hit' | 'alone' | 'gone';

interface Waiter {
  readonly resolve: (end: WaitEnd) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
}

/** One actor's miss in flight. The leader holds it as the token that settles it. */
export class Flight {
  readonly #waiters = new Set<Waiter>();
  #timer: NodeJS.Timeout | undefined;
  #ended = false;

  constructor(
    readonly key: string,
    /** Clock time after which the flight no longer holds anyone. */
    readonly deadline: number,
  ) {}

  get ended(): boolean {
    return this.#ended;
  }

  get waiting(): number {
    return this.#waiters.size;
  }

  /** Waits for the flight's end; `signal` aborting ends the wait with `gone`. */
  wait(signal: AbortSignal | undefined, now: number, onExpire: (f: Flight) => void): Promise<WaitEnd> {
    if (signal?.aborted) return Promise.resolve('gone');
    return new Promise<WaitEnd>((resolve) => {
      const waiter: Waiter = {
        resolve,
        signal,
        onAbort:
          signal === undefined
            ? undefined
            : () => {
                this.#waiters.delete(waiter);
                resolve('gone');
              },
      };
      if (waiter.onAbort !== undefined) signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.add(waiter);
      if (this.#timer === undefined) {
        this.#timer = setTimeout(() => onExpire(this), Math.max(0, this.deadline - now));
        this.#timer.unref();
      }
    });
  }

  /** Ends the flight: every follower still waiting gets `end`. Idempotent. */
  end(end: Exclude<WaitEnd, 'gone'>): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    for (const w of this.#waiters) {
      if (w.onAbort !== undefined) w.signal?.removeEventListener('abort', w.onAbort);
      w.resolve(end);
    }
    this.#waiters.clear();
  }
}

export interface MissFlightsOptions {
  /** The longest a follower waits (the ext_proc message timeout). */
  readonly waitTimeoutMs: number;
  /** Millisecond clock (tests inject one); default `performance`. */
  readonly clock?: { now(): number };
}

export class MissFlights {
  readonly #flights = new Map<string, Flight>();
  readonly #waitTimeoutMs: number;
  readonly #clock: { now(): number };
  /** Waits and their results: the `cache.coalesced` tallies of `CACHE_STATS`. */
  readonly #tallies: Record<'waits' | CoalescedResult, number> = cacheTallies().coalesced;
  readonly #sinceReset = new SinceReset(() => this.#tallies);
  readonly #expire = (f: Flight): void => this.#end(f, 'timeout');

  constructor(opts: MissFlightsOptions) {
    if (!(opts.waitTimeoutMs > 0)) throw new RangeError('waitTimeoutMs must be > 0');
    this.#waitTimeoutMs = opts.waitTimeoutMs;
    this.#clock = opts.clock ?? performance;
  }

  /** The flight a miss for `key` can join, if one is in flight and not past its deadline. */
  inFlight(key: string): Flight | undefined {
    const f = this.#flights.get(key);
    if (f === undefined) return undefined;
    if (this.#clock.now() < f.deadline) return f;
    this.#end(f, 'timeout'); // its leader never settled in time: nobody waits for it any more
    return undefined;
  }

  /** Starts a flight for `key` (the caller leads it and must `settle` it). */
  lead(key: string): Flight {
    const f = new Flight(key, this.#clock.now() + this.#waitTimeoutMs);
    this.#flights.set(key, f);
    return f;
  }

  /** Waits for `flight` as a follower (counted as a coalesced wait). */
  follow(flight: Flight, signal: AbortSignal | undefined): Promise<WaitEnd> {
    this.#tallies.waits++;
    return flight.wait(signal, this.#clock.now(), this.#expire);
  }

  /** The leader is done: `learned` when its answer taught the cache, else `failed`. */
  settle(flight: Flight, learned: boolean): void {
    this.#end(flight, learned ? 'learned' : 'failed');
  }

  /** Records what became of one follower. */
  count(result: CoalescedResult): void {
    this.#tallies[result]++;
  }

  #end(flight: Flight, end: Exclude<WaitEnd, 'gone'>): void {
    if (this.#flights.get(flight.key) === flight) this.#flights.delete(flight.key);
    flight.end(end);
  }

  /** Flights in progress (bounded by the actors with a miss in flight). */
  get size(): number {
    return this.#flights.size;
  }

  stats(): Record<'waits' | CoalescedResult, number> {
    return this.#sinceReset.current();
  }

  lifetimeStats(): Record<'waits' | CoalescedResult, number> {
    return { ...this.#tallies };
  }

  resetStats(): void {
    this.#sinceReset.reset();
  }
}
