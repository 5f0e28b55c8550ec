/**
 * The re-run rule, as one pure function: given what the router saw and the state of the request, either relay
 * the upstream's answer, re-run the whole chain for the same request (now, or after a short backoff), or fail
 * with a catalog error.
 *
 * A re-run happens only when the request cannot have been processed by the actor and can be sent again intact:
 * - the outcome is a stale rejection (421 + `x-ate-assignment-stale: true`), a connect failure, or a reset before
 *   any response headers; a reset after the request was written re-runs only GET, HEAD and OPTIONS;
 * - (a worker whose certificate fails verification never re-runs: asking again would reach the same worker);
 * - nothing has been written to the client, and the client is still there;
 * - the request body is replayable (no body, or a body that fits within `--max-replay-body-bytes`);
 * - fewer than `--max-reruns` re-runs have happened;
 * - the re-run can start within `--rerun-budget-ms` of the request's arrival.
 *
 * The first re-run starts at once (the actor has usually just moved, and the re-run asks the control plane where
 * it is now). The second and later wait a jittered `--rerun-backoff-min-ms`..`--rerun-backoff-max-ms`, so a
 * request that keeps meeting an actor on the move gives the move time to settle, and many such requests do not
 * arrive at the control plane in lockstep.
 */
import { rerunReason, type RerunReason, type UpstreamOutcome } from '../api/filter.js';

export { rerunReason };
import { ERRORS, type ProxyErrorSpec } from '../http/errors.js';

export interface RerunPolicy {
  /** Re-runs allowed per client request. */
  readonly maxReruns: number;
  /** Every re-run must be able to start within this many ms of the request's arrival. */
  readonly budgetMs: number;
  /** Wait before the second and later re-runs: uniformly from min to max ms (the first re-run never waits). */
  readonly backoffMinMs: number;
  readonly backoffMaxMs: number;
}

/** The flags' defaults (`chain/config.ts` declares the flags with them). */
export const DEFAULT_RERUN_POLICY: RerunPolicy = Object.freeze({ maxReruns: 2, budgetMs: 3000, backoffMinMs: 10, backoffMaxMs: 50 });

export interface RerunInput {
  readonly outcome: UpstreamOutcome;
  /** The attempt that produced `outcome`: 0 for the first pass. */
  readonly attempt: number;
  readonly policy: RerunPolicy;
  /** Milliseconds since the request arrived. */
  readonly elapsedMs: number;
  /** A number in [0, 1) that picks the backoff within its range (Math.random() in the chain). */
  readonly jitter: number;
  readonly method: string;
  /** True when the request has no body or its body can be sent again from the first byte. */
  readonly bodyReplayable: boolean;
  /** Some of the response has been written to the client. */
  readonly responseStarted: boolean;
  /** The client went away. */
  readonly downstreamClosed: boolean;
}

/** Which limit ended the re-runs: the count (`--max-reruns`) or the time (`--rerun-budget-ms`). */
export type RerunLimit = 'count' | 'budget';

export type RerunDecision =
  | { readonly kind: 'relay' }
  /** Re-run after `delayMs` (0: at once). */
  | { readonly kind: 'rerun'; readonly reason: RerunReason; readonly delayMs: number }
  | { readonly kind: 'fail'; readonly error: ProxyErrorSpec; readonly limit?: RerunLimit };

const RELAY: RerunDecision = Object.freeze({ kind: 'relay' });
const EXHAUSTED: Readonly<Record<RerunReason, ProxyErrorSpec>> = Object.freeze({
  stale: ERRORS.STALE_EXHAUSTED,
  connect: ERRORS.CONNECT_EXHAUSTED,
  reset: ERRORS.RESET_EXHAUSTED,
});
const FIRST_FAILURE: Readonly<Record<RerunReason, ProxyErrorSpec>> = Object.freeze({
  stale: ERRORS.STALE_EXHAUSTED,
  connect: ERRORS.UPSTREAM_CONNECT,
  reset: ERRORS.UPSTREAM_RESET,
});

/** Methods that may be sent again after the request may already have reached the actor. */
export const REPLAY_SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

function fail(error: ProxyErrorSpec, limit?: RerunLimit): RerunDecision {
  return limit === undefined ? { kind: 'fail', error } : { kind: 'fail', error, limit };
}


/** The wait before re-run number `rerun` (1 for the first): 0 for the first, jittered min..max after that. */
export function backoffMs(rerun: number, policy: RerunPolicy, jitter: number): number {
  if (rerun <= 1) return 0;
  const span = policy.backoffMaxMs - policy.backoffMinMs;
  return policy.backoffMinMs + Math.floor(Math.min(Math.max(jitter, 0), 0.999999) * (span + 1));
}

export function shouldRerun(input: RerunInput): RerunDecision {
  const { outcome, policy } = input;
  if (outcome.kind === 'response') return RELAY;
  if (outcome.kind === 'timeout') return fail(ERRORS.UPSTREAM_TIMEOUT);
  if (outcome.kind === 'cancelled') return fail(ERRORS.DOWNSTREAM_CLOSED);
  if (outcome.kind === 'invalid-request') return fail(ERRORS.UPSTREAM_REQUEST_INVALID);
  if (outcome.kind === 'identity-rejected') return fail(ERRORS.UPSTREAM_IDENTITY);
  const reason = rerunReason(outcome) as RerunReason;
  if (input.downstreamClosed) return fail(ERRORS.DOWNSTREAM_CLOSED);
  if (input.responseStarted) return fail(FIRST_FAILURE[reason]);
  if (outcome.kind === 'reset' && outcome.requestWritten && !REPLAY_SAFE_METHODS.has(input.method)) {
    return fail(ERRORS.UPSTREAM_RESET_AFTER_SEND);
  }
  if (input.attempt >= policy.maxReruns) return policy.maxReruns === 0 ? fail(FIRST_FAILURE[reason]) : fail(EXHAUSTED[reason], 'count');
  if (!input.bodyReplayable) return fail(reason === 'stale' ? ERRORS.STALE_NOT_REPLAYABLE : ERRORS.UPSTREAM_NOT_REPLAYABLE);
  const delayMs = backoffMs(input.attempt + 1, policy, input.jitter);
  if (input.elapsedMs + delayMs >= policy.budgetMs) return fail(EXHAUSTED[reason], 'budget');
  return { kind: 'rerun', reason, delayMs };
}
