/** What resolving one actor produced, for one caller. Success and every failure the HTTP map knows. */
import type * as grpc from '@grpc/grpc-js';
import type { ControlActor } from './control-client.js';

/**
 * How this caller took part in the resume: `none` the actor was already running, `triggered` this caller started
 * the activation, `joined` it attached to an activation already under way.
 */
export type ResumeLabel = 'none' | 'triggered' | 'joined';

export type ResumeOutcome =
  /** The actor is RUNNING on the worker at `ip` (a valid IPv4 or IPv6 literal). */
  | { readonly kind: 'ok'; readonly ip: string; readonly actor: ControlActor; readonly resume: ResumeLabel }
  /** ResumeActor failed with `code`. `budgetExhausted`: it was still retryable when the budget ran out. */
  | { readonly kind: 'grpc-error'; readonly code: grpc.status; readonly details: string; readonly budgetExhausted: boolean }
  /** ResumeActor answered, but the actor is not RUNNING or its worker IP is not an IP address. */
  | { readonly kind: 'unroutable'; readonly reason: 'not-running' | 'bad-ip'; readonly status: string }
  /** Parking is on, the resume is retrying, and every parking slot is taken. */
  | { readonly kind: 'lot-full' }
  /** The caller went away before the resume finished (the resume itself carries on). */
  | { readonly kind: 'cancelled' }
  /** The budget ran out while the first ResumeActor call had not answered yet. */
  | { readonly kind: 'timeout' };

export type ResumeFailure = Exclude<ResumeOutcome, { kind: 'ok' }>;

export const CANCELLED: ResumeOutcome = Object.freeze({ kind: 'cancelled' });
export const LOT_FULL: ResumeOutcome = Object.freeze({ kind: 'lot-full' });
export const TIMEOUT: ResumeOutcome = Object.freeze({ kind: 'timeout' });
