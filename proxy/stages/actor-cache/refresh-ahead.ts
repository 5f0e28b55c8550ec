/**
 * Refresh-ahead: a binding that serves a hit in the last part of its TTL (`REFRESH_AHEAD_FRACTION`) is
 * re-validated in the background by one resolver round trip for that actor, before it expires, so requests to an
 * actor in use stay hits. Only a hit starts a refresh: an idle binding is never refreshed (and a suspended actor
 * is never kept awake by one).
 *
 * - At most one refresh in flight per actor (and at most `maxInFlight` in all; a hit past that starts none, a
 *   later hit may).
 * - Success renews the binding in the cache (fresh generation, one more TTL); the cache learns only from the
 *   resolver's answer. A failure (or a binding that changed meanwhile) leaves the binding to expire normally and
 *   it is not refreshed again.
 * - Counted as `ok` (renewed) or `failed`.
 */
import type { Logger } from 'pino';
import type { Revalidation, Revalidator } from '../revalidator.js';
import type { Binding, BindingCache } from './binding-cache.js';
import { SinceReset } from '../../../lib/since-reset.js';
import { cacheTallies } from './counters.js';

/** A hit in the last 20 % of a binding's TTL makes it due for a refresh. */
export const REFRESH_AHEAD_FRACTION = 0.2;
/** Refreshes in flight at once, over all actors. */
export const MAX_REFRESHES_IN_FLIGHT = 256;

export type RefreshResult = 'ok' | 'failed';

export interface RefreshAheadOptions {
  readonly cache: BindingCache;
  readonly revalidator: Revalidator;
  readonly log: Logger;
  readonly maxInFlight?: number;
}

export class RefreshAhead {
  readonly #cache: BindingCache;
  readonly #revalidator: Revalidator;
  readonly #log: Logger;
  readonly #maxInFlight: number;
  /** Actor keys with a refresh in flight. */
  readonly #inFlight = new Set<string>();
  readonly #closing = new AbortController();
  /** Refreshes by result: the `cache.refreshes` tallies of `CACHE_STATS`. */
  readonly #tallies: Record<RefreshResult, number> = cacheTallies().refreshes;
  readonly #sinceReset = new SinceReset(() => this.#tallies);
  /** Settles when no refresh is in flight (tests and shutdown). */
  #idle: Promise<void> = Promise.resolve();
  #markIdle: (() => void) | undefined;

  constructor(opts: RefreshAheadOptions) {
    this.#cache = opts.cache;
    this.#revalidator = opts.revalidator;
    this.#log = opts.log;
    this.#maxInFlight = opts.maxInFlight ?? MAX_REFRESHES_IN_FLIGHT;
  }

  /** A hit found `binding` due: starts its refresh unless one is in flight for `key` (or too many in all). */
  start(key: string, binding: Binding, authority: string, scheme: 'http' | 'https'): void {
    if (this.#inFlight.has(key) || this.#inFlight.size >= this.#maxInFlight || this.#closing.signal.aborted) return;
    if (!this.#cache.claimRefresh(key, binding.generation)) return;
    if (this.#inFlight.size === 0) this.#idle = new Promise((resolve) => (this.#markIdle = resolve));
    this.#inFlight.add(key);
    void this.#revalidator
      .revalidate({ authority, scheme }, this.#closing.signal)
      .catch((err: unknown): Revalidation => ({ kind: 'failed', reason: (err as Error)?.message ?? String(err) }))
      .then((result) => this.#finish(key, binding, result));
  }

  #finish(key: string, binding: Binding, result: Revalidation): void {
    this.#inFlight.delete(key);
    const renewed = result.kind === 'routed' ? this.#cache.renew(key, binding.generation, result.address) : undefined;
    if (renewed !== undefined) {
      this.#tallies.ok++;
      this.#log.debug({ actor: key, address: renewed.address, generation: renewed.generation }, 'actor binding refreshed');
    } else {
      this.#cache.refreshFailed(key, binding.generation);
      this.#tallies.failed++;
      const reason = result.kind === 'failed' ? result.reason : `binding ${binding.generation} changed meanwhile or address not literal`;
      this.#log.debug({ actor: key, generation: binding.generation, reason }, 'actor binding refresh failed');
    }
    if (this.#inFlight.size === 0) this.#markIdle?.();
  }

  isRefreshing(key: string): boolean {
    return this.#inFlight.has(key);
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Resolves once no refresh is in flight. */
  idle(): Promise<void> {
    return this.#inFlight.size === 0 ? Promise.resolve() : this.#idle;
  }

  stats(): Record<RefreshResult, number> {
    return this.#sinceReset.current();
  }

  lifetimeStats(): Record<RefreshResult, number> {
    return { ...this.#tallies };
  }

  resetStats(): void {
    this.#sinceReset.reset();
  }

  /** Shutdown: aborts the refreshes in flight and starts no more. */
  close(): Promise<void> {
    this.#closing.abort();
    return this.idle();
  }
}
