/**
 * The rule for retrying a request's ext_proc stream, as one pure function: a miss whose stream could not be opened
 * (the processor restarting: the first message ended with UNAVAILABLE before any answer) or whose connection failed
 * under it (the first message ended with a connection loss, `connection-loss.ts`: e.g. the processor closing the
 * connection after a burst of other requests' cancelled streams) is tried again on a fresh stream after a backoff —
 * as Envoy's `GrpcService.retry_policy` does for ext_proc streams — within the request's re-run budget
 * (`--rerun-budget-ms`, counted from its arrival, the same budget its re-runs have). Only then does the client get
 * the failure it gets without retries (500 `PROXY_ERR_EXTPROC_FAILED`).
 *
 * Never retried: any other end of the round trip (an answer, the processor ending the stream with OK, a message
 * timeout, another gRPC status: those are the processor's doing, not an outage of it); a request with
 * `failure_mode_allow` (its processor is optional: a failure continues unprocessed at once, as in Envoy); a request
 * whose body can no longer be replayed. At most `maxWaiting` requests wait to retry at once; a request that would be
 * one more fails at once, so a long outage does not pile requests up (0: no retries at all).
 */
import type { MessageResult } from './client.js';

export interface StreamRetryPolicy {
  /** `--rerun-budget-ms`: a retry must start within this many ms of the request's arrival. */
  readonly budgetMs: number;
  /** `--extproc-retry-max-waiting`: requests waiting to retry at once, at most (0: never retry). */
  readonly maxWaiting: number;
}

/** The wait before the first retry, and the longest wait (doubling in between; Envoy's retry back-off defaults). */
export const RETRY_BASE_MS = 25;
export const RETRY_MAX_MS = 250;

export interface StreamRetryInput {
  /** How the stream's first message ended. */
  readonly result: MessageResult;
  readonly failureModeAllow: boolean;
  /** No body, or a body that can still be sent from its first byte. */
  readonly bodyReplayable: boolean;
  /** Milliseconds since the request arrived. */
  readonly elapsedMs: number;
  /** Retries this request has made already. */
  readonly retries: number;
  /** Requests waiting to retry now (this one not included). */
  readonly waiting: number;
  readonly policy: StreamRetryPolicy;
  /** A number in [0, 1) that places the wait in the upper half of its range. */
  readonly jitter: number;
}

export type GiveUp = 'not-retryable' | 'failure-mode-allow' | 'not-replayable' | 'cap' | 'budget';

export type StreamRetryDecision = { readonly kind: 'retry'; readonly delayMs: number } | { readonly kind: 'give-up'; readonly why: GiveUp };

/** The wait before retry number `retry` (0 for the first): half to all of min(max, base × 2^retry). */
export function retryDelayMs(retry: number, jitter: number): number {
  const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(retry, 16));
  return Math.ceil(ceiling * (0.5 + 0.5 * Math.min(Math.max(jitter, 0), 1)));
}

const giveUp = (why: GiveUp): StreamRetryDecision => ({ kind: 'give-up', why });

export function shouldRetryStream(input: StreamRetryInput): StreamRetryDecision {
  const { result, policy } = input;
  if (result.kind !== 'error' || !(result.code === 'UNAVAILABLE' || result.connectionLost === true)) return giveUp('not-retryable');
  if (input.failureModeAllow) return giveUp('failure-mode-allow');
  if (!input.bodyReplayable) return giveUp('not-replayable');
  if (input.retries === 0 && input.waiting >= policy.maxWaiting) return giveUp('cap');
  const delayMs = retryDelayMs(input.retries, input.jitter);
  if (input.elapsedMs + delayMs >= policy.budgetMs) return giveUp('budget');
  return { kind: 'retry', delayMs };
}
