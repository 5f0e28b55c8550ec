/**
 * The re-run rule, as one pure function: given what the router saw and the state of the request, either relay
 * the upstream's answer, re-run the whole chain for the same request, or fail with a catalog error.
 *
 * A re-run happens only when the request cannot have been processed by the actor and can be sent again intact:
 * - the outcome is a stale rejection (421 + `x-ate-assignment-stale: true`), a connect failure, or a reset before
 *   any response headers; a reset after the request was written re-runs only GET, HEAD and OPTIONS;
 * - nothing has been written to the client, and the client is still there;
 * - the request body is replayable (no body, or a body that fits within `--max-replay-body-bytes`);
 * - fewer than `--max-reruns` re-runs have happened.
 */
import type { RerunReason, UpstreamOutcome } from '../api/filter.js';
import { ERRORS, type ProxyErrorSpec } from './errors.js';

export interface RerunInput {
  readonly outcome: UpstreamOutcome;
  /** The attempt that produced `outcome`: 0 for the first pass. */
  readonly attempt: number;
  readonly maxReruns: number;
  readonly method: string;
  /** True when the request has no body or its body can be sent again from the first byte. */
  readonly bodyReplayable: boolean;
  /** Some of the response has been written to the client. */
  readonly responseStarted: boolean;
  /** The client went away. */
  readonly downstreamClosed: boolean;
}

export type RerunDecision =
  | { readonly kind: 'relay' }
  | { readonly kind: 'rerun'; readonly reason: RerunReason }
  | { readonly kind: 'fail'; readonly error: ProxyErrorSpec };

const RELAY: RerunDecision = Object.freeze({ kind: 'relay' });
const RERUN: Readonly<Record<RerunReason, RerunDecision>> = Object.freeze({
  stale: Object.freeze({ kind: 'rerun', reason: 'stale' }),
  connect: Object.freeze({ kind: 'rerun', reason: 'connect' }),
  reset: Object.freeze({ kind: 'rerun', reason: 'reset' }),
});
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

function fail(error: ProxyErrorSpec): RerunDecision {
  return { kind: 'fail', error };
}

export function rerunReason(outcome: UpstreamOutcome): RerunReason | undefined {
  switch (outcome.kind) {
    case 'stale':
      return 'stale';
    case 'connect-failed':
      return 'connect';
    case 'reset':
      return 'reset';
    default:
      return undefined;
  }
}

export function shouldRerun(input: RerunInput): RerunDecision {
  const { outcome } = input;
  if (outcome.kind === 'response') return RELAY;
  if (outcome.kind === 'timeout') return fail(ERRORS.UPSTREAM_TIMEOUT);
  if (outcome.kind === 'cancelled') return fail(ERRORS.DOWNSTREAM_CLOSED);
  if (outcome.kind === 'invalid-request') return fail(ERRORS.UPSTREAM_REQUEST_INVALID);
  const reason = rerunReason(outcome) as RerunReason;
  if (input.downstreamClosed) return fail(ERRORS.DOWNSTREAM_CLOSED);
  if (input.responseStarted) return fail(FIRST_FAILURE[reason]);
  if (outcome.kind === 'reset' && outcome.requestWritten && !REPLAY_SAFE_METHODS.has(input.method)) {
    return fail(ERRORS.UPSTREAM_RESET_AFTER_SEND);
  }
  if (input.attempt >= input.maxReruns) return fail(input.maxReruns === 0 ? FIRST_FAILURE[reason] : EXHAUSTED[reason]);
  if (!input.bodyReplayable) return fail(reason === 'stale' ? ERRORS.STALE_NOT_REPLAYABLE : ERRORS.UPSTREAM_NOT_REPLAYABLE);
  return RERUN[reason];
}
