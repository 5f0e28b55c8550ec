/**
 * Passive outlier detection per worker address, as Envoy's outlier detection with `consecutive_local_origin_failure`
 * at 1 and connect failures only: the first attempt that cannot connect (refused, reset before a byte was sent,
 * unreachable, or a connect timeout — a worker that accepts TCP and never completes the TLS handshake included)
 * marks its address down. While it is down:
 * - every request already handed to that worker's pool or HTTP/2 session and not yet sent fails at once as a
 *   connect failure (`ejected`: never sent), so it goes into its own re-run instead of waiting for a connect of
 *   its own to fail;
 * - a request the cache routes there fails the same way without a connect (the binding is stale: the re-run asks
 *   the resolver);
 * - a request the resolver routes there (ext_proc, or `--resolver apiserver`: a resume that names the address
 *   again) lets the address back and goes: the control plane is the authority on where an actor runs;
 * - a probe (a TCP connect, or the TLS handshake through the pools' connector) runs with a backoff, and the first
 *   that connects lets the address back.
 * An address nobody routes to for `FORGET_AFTER_MS` is forgotten (its probes stop), so the state is bounded by
 * the addresses in use. Addresses come from the resolver, never from a client.
 *
 * `transition` is the state machine, pure (tested as a table); `OutlierDetector` holds the states, runs the probes
 * and counts. Only down addresses are stored: the hit path pays one lookup in a map that is almost always empty.
 */
import type { Route } from '../api/filter.js';
import type { OutlierTallies } from '../ops/stats.js';

/** Why an address was marked down, from the failed connect's error code. */
export type EjectionReason = keyof OutlierTallies['ejections'];
export const EJECTION_REASONS: readonly EjectionReason[] = Object.freeze(['refused', 'reset', 'timeout', 'unreachable']);

/** What let a down address back: a probe that connected, or a resume that named it. */
export type Readmission = keyof OutlierTallies['readmissions'];

/** The first probe after an ejection, and the longest wait between probes (doubling in between). */
export const PROBE_BASE_MS = 200;
export const PROBE_MAX_MS = 5000;
/** A down address no request was routed to for this long is forgotten. */
export const FORGET_AFTER_MS = 60_000;

export type AddressHealth =
  | { readonly kind: 'up' }
  | {
      readonly kind: 'down';
      readonly reason: EjectionReason;
      /** When it went down, and when a request was last routed to it (ms). */
      readonly since: number;
      readonly lastRoutedAt: number;
      /** Probes that failed since it went down. */
      readonly failedProbes: number;
    };

export type HealthEvent =
  | { readonly kind: 'connect-failed'; readonly reason: EjectionReason }
  | { readonly kind: 'routed'; readonly source: Route['source'] }
  | { readonly kind: 'probe'; readonly ok: boolean };

export type HealthAction =
  /** Went down: fail what was not sent yet, probe after `probeInMs`. */
  | { readonly kind: 'eject'; readonly reason: EjectionReason; readonly probeInMs: number }
  /** Send the request (the address is up, or was just let back: `readmitted`). */
  | { readonly kind: 'dispatch'; readonly readmitted: boolean }
  /** Fail the request at once as a connect failure, without connecting. */
  | { readonly kind: 'fail-fast' }
  /** A probe connected: the address is back. */
  | { readonly kind: 'readmit' }
  /** Still down: probe again after `probeInMs`. */
  | { readonly kind: 'probe-again'; readonly probeInMs: number }
  /** Down and unused for FORGET_AFTER_MS: stop probing, drop the state. */
  | { readonly kind: 'forget' }
  | { readonly kind: 'none' };

export const UP: AddressHealth = Object.freeze({ kind: 'up' });

/** The wait before the probe that follows `failedProbes` failed ones; `jitter` in [0, 1) adds up to 20 %. */
export function probeDelayMs(failedProbes: number, jitter: number): number {
  const base = Math.min(PROBE_MAX_MS, PROBE_BASE_MS * 2 ** Math.min(failedProbes, 16));
  return Math.round(base * (1 + 0.2 * Math.min(Math.max(jitter, 0), 1)));
}

/** The ejection reason of a connect failure's error code. */
export function ejectionReason(code: string): EjectionReason {
  switch (code) {
    case 'ECONNREFUSED':
      return 'refused';
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return 'timeout';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EHOSTDOWN':
    case 'ENETDOWN':
    case 'EADDRNOTAVAIL':
      return 'unreachable';
    default:
      return 'reset'; // ECONNRESET, EPIPE, a socket closed before the request started, ...
  }
}

/** What `event` does to an address in `health` at time `now` (ms); `jitter` in [0, 1) spreads the probes. */
export function transition(health: AddressHealth, event: HealthEvent, now: number, jitter: number): { readonly health: AddressHealth; readonly action: HealthAction } {
  if (health.kind === 'up') {
    switch (event.kind) {
      case 'connect-failed': {
        const down: AddressHealth = { kind: 'down', reason: event.reason, since: now, lastRoutedAt: now, failedProbes: 0 };
        return { health: down, action: { kind: 'eject', reason: event.reason, probeInMs: probeDelayMs(0, jitter) } };
      }
      case 'routed':
        return { health, action: { kind: 'dispatch', readmitted: false } };
      case 'probe':
        return { health, action: { kind: 'none' } }; // a probe that finished after the address came back another way
    }
  }
  switch (event.kind) {
    case 'connect-failed':
      return { health, action: { kind: 'none' } }; // an attempt that was under way when the address went down
    case 'routed':
      if (event.source === 'cache') return { health: { ...health, lastRoutedAt: now }, action: { kind: 'fail-fast' } };
      return { health: UP, action: { kind: 'dispatch', readmitted: true } }; // the resolver names it again
    case 'probe': {
      if (event.ok) return { health: UP, action: { kind: 'readmit' } };
      if (now - health.lastRoutedAt >= FORGET_AFTER_MS) return { health: UP, action: { kind: 'forget' } };
      const failedProbes = health.failedProbes + 1;
      return { health: { ...health, failedProbes }, action: { kind: 'probe-again', probeInMs: probeDelayMs(failedProbes, jitter) } };
    }
  }
}

export interface OutlierDetectorOptions {
  /** One connect attempt to `address` (TCP, or TLS through the pools' connector): true when it connected. */
  readonly probe: (address: string) => Promise<boolean>;
  /** The address went down: fail at once every request to it not sent yet. */
  readonly onEject: (address: string) => void;
  readonly tallies: OutlierTallies;
  readonly log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  readonly now?: () => number;
  readonly random?: () => number;
}

interface DownAddress {
  health: AddressHealth;
  timer: NodeJS.Timeout | undefined;
}

export class OutlierDetector {
  readonly #down = new Map<string, DownAddress>();
  readonly #opts: OutlierDetectorOptions;
  readonly #now: () => number;
  readonly #random: () => number;
  #closed = false;

  constructor(opts: OutlierDetectorOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? (() => performance.now());
    this.#random = opts.random ?? Math.random;
  }

  /** Addresses down now. */
  get downCount(): number {
    return this.#down.size;
  }

  isDown(address: string): boolean {
    return this.#down.has(address);
  }

  /** A request is routed to `address` by `source`: send it, or fail it at once (the address is down). */
  route(address: string, source: Route['source']): 'dispatch' | 'fail-fast' {
    const entry = this.#down.get(address);
    if (entry === undefined) return 'dispatch';
    const { health, action } = transition(entry.health, { kind: 'routed', source }, this.#now(), this.#random());
    if (action.kind === 'fail-fast') {
      entry.health = health;
      this.#opts.tallies.failedFast++;
      return 'fail-fast';
    }
    this.#readmit(address, entry, 'resume');
    return 'dispatch';
  }

  /**
   * An attempt to `address` could not connect. True when this failure marked the address down (the requests not
   * sent yet have been failed); false when it was already down (the attempt counts as failed fast).
   */
  connectFailed(address: string, code: string): boolean {
    if (this.#down.has(address)) {
      this.#opts.tallies.failedFast++;
      return false;
    }
    const { health, action } = transition(UP, { kind: 'connect-failed', reason: ejectionReason(code) }, this.#now(), this.#random());
    if (action.kind !== 'eject' || this.#closed) return false;
    const entry: DownAddress = { health, timer: undefined };
    this.#down.set(address, entry);
    this.#opts.tallies.ejections[action.reason]++;
    this.#opts.log?.warn({ worker: address, reason: action.reason, code }, 'upstream worker marked down: requests not yet sent to it re-run at once');
    this.#schedule(address, entry, action.probeInMs);
    this.#opts.onEject(address);
    return true;
  }

  #schedule(address: string, entry: DownAddress, delayMs: number): void {
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      void this.#probe(address, entry);
    }, delayMs);
    entry.timer.unref();
  }

  async #probe(address: string, entry: DownAddress): Promise<void> {
    let ok = false;
    try {
      ok = await this.#opts.probe(address);
    } catch {
      ok = false;
    }
    if (this.#closed || this.#down.get(address) !== entry) return; // let back meanwhile (a resume named it)
    this.#opts.tallies.probes[ok ? 'ok' : 'failed']++;
    const { health, action } = transition(entry.health, { kind: 'probe', ok }, this.#now(), this.#random());
    entry.health = health;
    if (action.kind === 'readmit') this.#readmit(address, entry, 'probe');
    else if (action.kind === 'forget') this.#down.delete(address);
    else if (action.kind === 'probe-again') this.#schedule(address, entry, action.probeInMs);
  }

  #readmit(address: string, entry: DownAddress, cause: Readmission): void {
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    this.#down.delete(address);
    this.#opts.tallies.readmissions[cause]++;
    this.#opts.log?.info({ worker: address, via: cause }, 'upstream worker let back');
  }

  /** Stops every probe (at shutdown). */
  close(): void {
    this.#closed = true;
    for (const entry of this.#down.values()) if (entry.timer !== undefined) clearTimeout(entry.timer);
    this.#down.clear();
  }
}
