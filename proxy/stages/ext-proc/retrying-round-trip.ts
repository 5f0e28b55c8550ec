/**
 * A request's first ext_proc round trip, retried on a fresh stream while `retry-rule.ts` says so: each retry waits
 * its backoff (a client that leaves meanwhile ends the wait: `aborted`), then opens a new stream and sends the
 * message again, decorated as a first message. Counted: every fresh stream (`retried`), and how a retrying request
 * ended (`recovered` with an answer, `budgetExhausted`, or `shed` when too many were waiting); the requests
 * waiting now are a gauge, which is also what the cap reads.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { ProxyRequest } from '../../request/context.js';
import type { ExtProcRetryTallies } from '../../ops/stats.js';
import type { MessageResult } from './client.js';
import type { Conversation } from './conversation.js';
import type { ProcessingRequest } from './messages.js';
import { shouldRetryStream, type GiveUp, type StreamRetryPolicy } from './retry-rule.js';

/** What the retries read and count: the proxy's counters (`tallies.extproc.retries`, `extprocRetriesWaiting`). */
export interface RetryCounters {
  readonly tallies: { readonly extproc: { readonly retries: ExtProcRetryTallies } };
  extprocRetriesWaiting: number;
}

export interface StreamRetries {
  readonly policy: StreamRetryPolicy;
  readonly counters: RetryCounters;
  readonly random?: () => number;
}

/** What the access log's details say when a retryable failure was given up on. */
const GAVE_UP: Partial<Record<GiveUp, string>> = {
  budget: 'the re-run budget (--rerun-budget-ms) is spent',
  cap: 'the most requests allowed (--extproc-retry-max-waiting) already wait to retry',
  'not-replayable': 'the request body can no longer be replayed',
};

async function waited(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/** Sends `message` as the conversation's first message, retrying on fresh streams as the rule allows. */
export async function roundTripWithRetries(
  ctx: ProxyRequest,
  conv: Conversation,
  message: ProcessingRequest,
  failureModeAllow: boolean,
  retries: StreamRetries | undefined,
): Promise<MessageResult> {
  let result = await conv.roundTrip(message);
  if (retries === undefined || result.kind !== 'error') return result;
  const { policy, counters } = retries;
  const random = retries.random ?? Math.random;
  let made = 0;
  let waiting = false;
  try {
    for (;;) {
      const decision = shouldRetryStream({
        result,
        failureModeAllow,
        bodyReplayable: ctx.body === null || ctx.body.replayable,
        elapsedMs: performance.now() - ctx.startedAt,
        retries: made,
        waiting: counters.extprocRetriesWaiting - (waiting ? 1 : 0),
        policy,
        jitter: random(),
      });
      if (decision.kind === 'give-up') {
        if (decision.why === 'cap') counters.tallies.extproc.retries.shed++;
        else if (decision.why === 'budget') counters.tallies.extproc.retries.budgetExhausted++;
        else if (made > 0 && (result.kind === 'response' || result.kind === 'closed')) counters.tallies.extproc.retries.recovered++;
        const why = GAVE_UP[decision.why];
        return result.kind === 'error' && why !== undefined ? { ...result, details: `${result.details}; not retried further after ${made} retries: ${why}` } : result;
      }
      if (!waiting) {
        waiting = true;
        counters.extprocRetriesWaiting++;
      }
      if (!(await waited(decision.delayMs, ctx.signal))) return { kind: 'aborted' };
      made++;
      counters.tallies.extproc.retries.retried++;
      ctx.log.debug({ retry: made, afterMs: decision.delayMs, code: result.kind === 'error' ? result.code : result.kind }, 'ext_proc stream could not be opened: retrying on a fresh stream');
      conv.reopen();
      result = await conv.roundTrip(message);
    }
  } finally {
    if (waiting) counters.extprocRetriesWaiting--;
  }
}
