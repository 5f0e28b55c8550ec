/**
 * Per-actor resume flights. Concurrent callers for one actor share one ResumeActor call (and its retries); the
 * flight is forgotten the moment it completes, so a later caller starts a fresh call. A flight runs detached from
 * its callers: a caller that goes away only stops waiting, and an in-flight ResumeActor is never cancelled
 * (cancelling mid-restore can strand a worker).
 *
 * Budget: one per flight, started by its first caller; a late joiner shares what is left. ABORTED (a concurrent
 * operation holds the actor) is always retried with backoff. With parking on, RESOURCE_EXHAUSTED, UNAVAILABLE and
 * FAILED_PRECONDITION are retried too, the budget is the smaller of the resume and park budgets, and each caller
 * of a retrying flight must hold a parking slot (a full lot sheds the caller at once). When the budget runs out
 * with a retryable error, callers get that error (e.g. "no free workers available"), not a timeout.
 */
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Context } from '@opentelemetry/api';
import type { ActorRef } from '../actor-ref.js';
import { type AttemptResult, RUNNING_STATUS } from './control-client.js';
import { backoffSequence, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.js';
import { ParkingLot } from './parking-lot.js';
import { CANCELLED, LOT_FULL, TIMEOUT, type ResumeOutcome } from './outcome.js';

export interface ParkingOptions {
  /** How long a retrying resume may keep callers parked. */
  readonly budgetMs: number;
  /** At most this many callers parked at once (all actors together). */
  readonly max: number;
}

export interface FlightObserver {
  /** Every ResumeActor call's result, including calls that finish after their flight's budget ran out. */
  attempt?(result: AttemptResult): void;
  /** A caller attached to a flight already under way. */
  join?(): void;
}

export interface ResumeFlightsOptions {
  /**
   * One ResumeActor call. It must settle (never reject); its own deadline is only a backstop. `trace`: the trace
   * context of the caller that started the flight (tracing on), the parent of the call's span.
   */
  readonly attempt: (ref: ActorRef, trace?: Context) => Promise<AttemptResult>;
  /** The detached budget of each flight. */
  readonly budgetMs: number;
  /** Parking; undefined means off (only ABORTED is retried, and nobody is ever shed). */
  readonly parking?: ParkingOptions;
  readonly backoff?: BackoffOptions;
  readonly observer?: FlightObserver;
  readonly random?: () => number;
}

const PARKING_RETRYABLE: ReadonlySet<grpc.status> = new Set([
  grpc.status.RESOURCE_EXHAUSTED,
  grpc.status.UNAVAILABLE,
  grpc.status.FAILED_PRECONDITION,
]);

interface Waiter {
  readonly leader: boolean;
  parked: boolean;
  settle(outcome: ResumeOutcome): void;
}

interface Flight {
  readonly key: string;
  readonly ref: ActorRef;
  /** The trace context of the caller that started the flight (tracing on). */
  readonly trace: Context | undefined;
  readonly waiters: Set<Waiter>;
  retrying: boolean;
  done: boolean;
  lastError: { readonly code: grpc.status; readonly details: string } | undefined;
  timer: NodeJS.Timeout | undefined;
}

export class ResumeFlights {
  /** The parking lot, when parking is on. */
  readonly lot: ParkingLot | undefined;
  /** The budget each flight gets. */
  readonly budgetMs: number;
  private readonly flights = new Map<string, Flight>();
  private readonly backoff: BackoffOptions;
  private readonly random: () => number;

  constructor(private readonly options: ResumeFlightsOptions) {
    this.lot = options.parking ? new ParkingLot(options.parking.max) : undefined;
    this.budgetMs = options.parking ? Math.min(options.budgetMs, options.parking.budgetMs) : options.budgetMs;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.random = options.random ?? Math.random;
  }

  /** Flights under way now. */
  get inFlight(): number {
    return this.flights.size;
  }

  /** A flight for `key` is under way (a caller now would join it). */
  isFlying(key: string): boolean {
    return this.flights.has(key);
  }

  isRetryable(code: grpc.status): boolean {
    return code === grpc.status.ABORTED || (this.lot !== undefined && PARKING_RETRYABLE.has(code));
  }

  /**
   * Resolves the actor `ref` (whose key is `key`, `atespace/name`): joins the flight under way or starts one.
   * `signal` is the caller's own lifetime: when it aborts, this caller gets `cancelled` and the flight carries on.
   * `trace`: the caller's trace context; a flight's ResumeActor calls are made in the trace of the caller that
   * started it.
   */
  resolve(ref: ActorRef, key: string, signal?: AbortSignal, trace?: Context): Promise<ResumeOutcome> {
    if (signal?.aborted) return Promise.resolve(CANCELLED);
    let flight = this.flights.get(key);
    const leader = flight === undefined;
    if (flight === undefined) {
      flight = { key, ref, trace, waiters: new Set(), retrying: false, done: false, lastError: undefined, timer: undefined };
      this.flights.set(key, flight);
    } else {
      this.options.observer?.join?.();
    }
    const f = flight;
    const promise = new Promise<ResumeOutcome>((resolve) => {
      let settled = false;
      const onAbort = (): void => {
        f.waiters.delete(waiter);
        waiter.settle(CANCELLED);
      };
      const waiter: Waiter = {
        leader,
        parked: false,
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          if (waiter.parked) this.lot?.leave();
          signal?.removeEventListener('abort', onAbort);
          resolve(outcome);
        },
      };
      if (f.retrying && this.lot && !this.park(waiter)) {
        waiter.settle(LOT_FULL);
        return;
      }
      f.waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    if (leader) this.start(f);
    return promise;
  }

  private park(waiter: Waiter): boolean {
    if (waiter.parked) return true;
    if (!this.lot?.tryEnter()) return false;
    waiter.parked = true;
    return true;
  }

  private start(flight: Flight): void {
    flight.timer = setTimeout(() => {
      const last = flight.lastError;
      this.finish(flight, () => (last ? { kind: 'grpc-error', ...last, budgetExhausted: true } : TIMEOUT));
    }, this.budgetMs);
    void this.run(flight, Date.now() + this.budgetMs);
  }

  private async run(flight: Flight, deadline: number): Promise<void> {
    const nextWait = backoffSequence(this.backoff, this.random);
    for (;;) {
      const result = await this.options.attempt(flight.ref, flight.trace);
      this.options.observer?.attempt?.(result);
      if (flight.done) return; // the budget ran out while this call was under way; it was counted, nothing else
      if (result.kind === 'ok') {
        this.finish(flight, success(result));
        return;
      }
      const error = { code: result.code, details: result.details };
      if (!this.isRetryable(result.code)) {
        this.finish(flight, () => ({ kind: 'grpc-error', ...error, budgetExhausted: false }));
        return;
      }
      flight.lastError = error;
      if (!flight.retrying) this.startRetrying(flight);
      const wait = nextWait();
      if (Date.now() + wait >= deadline) {
        this.finish(flight, () => ({ kind: 'grpc-error', ...error, budgetExhausted: true }));
        return;
      }
      await new Promise((r) => setTimeout(r, wait));
      if (flight.done) return;
    }
  }

  /** First retryable error: from now on every caller of this flight must hold a parking slot. */
  private startRetrying(flight: Flight): void {
    flight.retrying = true;
    if (!this.lot) return;
    for (const waiter of flight.waiters) {
      if (!this.park(waiter)) {
        flight.waiters.delete(waiter);
        waiter.settle(LOT_FULL);
      }
    }
  }

  /** Completes the flight once: forgets it first (so nobody can join a finished flight), then answers every caller. */
  private finish(flight: Flight, outcomeFor: (waiter: Waiter) => ResumeOutcome): void {
    if (flight.done) return;
    flight.done = true;
    if (flight.timer) clearTimeout(flight.timer);
    if (this.flights.get(flight.key) === flight) this.flights.delete(flight.key);
    for (const waiter of flight.waiters) waiter.settle(outcomeFor(waiter));
    flight.waiters.clear();
  }
}

/** Success only for a RUNNING actor with a valid worker IP. */
function success(result: Extract<AttemptResult, { kind: 'ok' }>): (waiter: Waiter) => ResumeOutcome {
  const { actor, resumed } = result;
  if (actor.status !== RUNNING_STATUS) {
    const outcome: ResumeOutcome = { kind: 'unroutable', reason: 'not-running', status: actor.status };
    return () => outcome;
  }
  if (net.isIP(actor.ateom_pod_ip) === 0) {
    const outcome: ResumeOutcome = { kind: 'unroutable', reason: 'bad-ip', status: actor.status };
    return () => outcome;
  }
  const ip = actor.ateom_pod_ip;
  return (waiter) => ({
    kind: 'ok',
    ip,
    actor,
    resume: resumed === false ? 'none' : waiter.leader ? 'triggered' : 'joined',
  });
}
