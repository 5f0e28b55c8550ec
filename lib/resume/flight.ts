/**
 * Per-actor resume flights. Concurrent callers for one actor share one ResumeActor call (and its retries); the
 * flight is forgotten the moment it completes, so a later caller starts a fresh call. A flight runs detached from
 * its callers: a caller that goes away only stops waiting, and an in-flight ResumeActor is never cancelled
 * (cancelling mid-restore can strand a worker).
 *
 * Budget: one per flight, started by its first caller; a late joiner shares what is left. ABORTED (a concurrent
 * operation holds the actor) and UNAVAILABLE (the control plane down for a moment) are always retried with backoff.
 * With parking on, RESOURCE_EXHAUSTED and FAILED_PRECONDITION are retried too and the budget is the smaller of the
 * resume and park budgets. Each caller of a retrying flight must hold a parking slot (at most `parkedMax` at once:
 * a full lot sheds the caller at once), so a long outage cannot pile up waiting requests. When the budget runs out
 * with a retryable error, callers get that error (e.g. "no free workers available"), not a timeout.
 *
 * A caller may bring a budget of its own (the data plane's: what is left of its request's re-run budget): it waits
 * for a retry only if the retry can start within it, and is otherwise answered with the last retryable error at
 * once, while the flight carries on for the others. The call under way is always waited for (a first call, or a
 * retry, however slow: only the flight's budget bounds it). A flight nobody waits for any more is not retried.
 */
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Context } from '@opentelemetry/api';
import type { ActorRef } from '../actor-ref.js';
import { type AttemptResult, RUNNING_STATUS } from './control-client.js';
import { backoffSequence, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.js';
import { ParkingLot } from './parking-lot.js';
import { CANCELLED, LOT_FULL, TIMEOUT, type ResumeOutcome } from './outcome.js';

/** Parking on: the codes it adds are retried, within this budget. */
export interface ParkingOptions {
  /** How long a retrying resume may keep callers parked. */
  readonly budgetMs: number;
}

/** The parking lot's default size: callers of retrying flights at once, all actors together. */
export const DEFAULT_PARKED_MAX = 1024;

export interface FlightObserver {
  /** Every ResumeActor call's result, including calls that finish after their flight's budget ran out. */
  attempt?(result: AttemptResult): void;
  /** A caller attached to a flight already under way. */
  join?(): void;
  /** A flight will call ResumeActor again after a retryable error `code`. */
  retry?(code: grpc.status): void;
  /** A caller was answered with the last retryable error because no retry could start within its own budget. */
  outOfBudget?(): void;
}

export interface ResumeFlightsOptions {
  /**
   * One ResumeActor call. It must settle (never reject); its own deadline is only a backstop. `trace`: the trace
   * context of the caller that started the flight (tracing on), the parent of the call's span.
   */
  readonly attempt: (ref: ActorRef, trace?: Context) => Promise<AttemptResult>;
  /** The detached budget of each flight. */
  readonly budgetMs: number;
  /** Parking on (RESOURCE_EXHAUSTED and FAILED_PRECONDITION retried too); undefined: off. */
  readonly parking?: ParkingOptions;
  /** Callers of retrying flights parked at once, at most (default DEFAULT_PARKED_MAX). */
  readonly parkedMax?: number;
  readonly backoff?: BackoffOptions;
  readonly observer?: FlightObserver;
  readonly random?: () => number;
}

/** Retried whatever the parking setting: a concurrent operation holds the actor, or the control plane is down for a moment. */
const ALWAYS_RETRYABLE: ReadonlySet<grpc.status> = new Set([grpc.status.ABORTED, grpc.status.UNAVAILABLE]);
/** Retried too with parking on: no free worker now, or a concurrent operation may move the actor out of that state. */
const PARKING_RETRYABLE: ReadonlySet<grpc.status> = new Set([grpc.status.RESOURCE_EXHAUSTED, grpc.status.FAILED_PRECONDITION]);

interface Waiter {
  readonly leader: boolean;
  /** The caller's own budget as an epoch-ms deadline for a retry to start; undefined: the flight's budget only. */
  readonly deadline: number | undefined;
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
  /** Callers of retrying flights. */
  readonly lot: ParkingLot;
  /** The budget each flight gets. */
  readonly budgetMs: number;
  private readonly flights = new Map<string, Flight>();
  private readonly backoff: BackoffOptions;
  private readonly random: () => number;

  constructor(private readonly options: ResumeFlightsOptions) {
    this.lot = new ParkingLot(options.parkedMax ?? DEFAULT_PARKED_MAX);
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
    return ALWAYS_RETRYABLE.has(code) || (this.options.parking !== undefined && PARKING_RETRYABLE.has(code));
  }

  /**
   * Resolves the actor `ref` (whose key is `key`, `atespace/name`): joins the flight under way or starts one.
   * `signal` is the caller's own lifetime: when it aborts, this caller gets `cancelled` and the flight carries on.
   * `budgetMs`: the caller's own budget for retries (from now); absent: the flight's. `trace`: the caller's trace
   * context; a flight's ResumeActor calls are made in the trace of the caller that started it.
   */
  resolve(ref: ActorRef, key: string, signal?: AbortSignal, budgetMs?: number, trace?: Context): Promise<ResumeOutcome> {
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
        deadline: budgetMs === undefined ? undefined : Date.now() + budgetMs,
        parked: false,
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          if (waiter.parked) this.lot.leave();
          signal?.removeEventListener('abort', onAbort);
          resolve(outcome);
        },
      };
      if (f.retrying && !this.park(waiter)) {
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
    if (!this.lot.tryEnter()) return false;
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
      const startAt = Date.now() + nextWait();
      const exhausted = (): ResumeOutcome => ({ kind: 'grpc-error', ...error, budgetExhausted: true });
      if (startAt >= deadline) {
        this.finish(flight, exhausted);
        return;
      }
      this.answerOutOfBudget(flight, startAt, exhausted());
      if (flight.waiters.size === 0) {
        this.finish(flight, exhausted); // nobody waits for the retry: forget the flight
        return;
      }
      this.options.observer?.retry?.(result.code);
      await new Promise((r) => setTimeout(r, startAt - Date.now()));
      if (flight.done) return;
    }
  }

  /** Answers now every caller whose own budget ends before the next retry can start. */
  private answerOutOfBudget(flight: Flight, startAt: number, outcome: ResumeOutcome): void {
    for (const waiter of flight.waiters) {
      if (waiter.deadline === undefined || waiter.deadline > startAt) continue;
      flight.waiters.delete(waiter);
      this.options.observer?.outOfBudget?.();
      waiter.settle(outcome);
    }
  }

  /** First retryable error: from now on every caller of this flight must hold a parking slot. */
  private startRetrying(flight: Flight): void {
    flight.retrying = true;
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
