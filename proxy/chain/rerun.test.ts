import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffMs, DEFAULT_RERUN_POLICY, rerunReason, shouldRerun, type RerunDecision, type RerunInput, type RerunPolicy } from './rerun.js';
import { ERRORS } from '../http/errors.js';
import type { UpstreamOutcome } from '../api/filter.js';

const STALE: UpstreamOutcome = { kind: 'stale', status: 421 };
const CONNECT: UpstreamOutcome = { kind: 'connect-failed', code: 'ECONNREFUSED' };
const RESET_WRITTEN: UpstreamOutcome = { kind: 'reset', requestWritten: true, code: 'UND_ERR_SOCKET' };
const RESET_UNWRITTEN: UpstreamOutcome = { kind: 'reset', requestWritten: false, code: 'ECONNRESET' };
const POLICY: RerunPolicy = { maxReruns: 2, budgetMs: 3000, backoffMinMs: 10, backoffMaxMs: 50 };

type Over = Partial<Omit<RerunInput, 'policy'>> & { policy?: Partial<RerunPolicy> };

function input(outcome: UpstreamOutcome, over: Over = {}): RerunInput {
  const { policy, ...rest } = over;
  return {
    outcome,
    attempt: 0,
    policy: { ...POLICY, ...policy },
    elapsedMs: 5,
    jitter: 0.5,
    method: 'GET',
    bodyReplayable: true,
    responseStarted: false,
    downstreamClosed: false,
    ...rest,
  };
}

const rerun = (reason: 'stale' | 'connect' | 'reset', delayMs: number): RerunDecision => ({ kind: 'rerun', reason, delayMs });
const fail = (error: (typeof ERRORS)[keyof typeof ERRORS], limit?: 'count' | 'budget'): RerunDecision =>
  limit === undefined ? { kind: 'fail', error } : { kind: 'fail', error, limit };

test('the defaults: two re-runs, a 3 s budget, a 10–50 ms backoff', () => {
  assert.deepEqual({ ...DEFAULT_RERUN_POLICY }, POLICY);
});

/** One row per rule: [what, input, decision]. */
const TABLE: readonly (readonly [string, RerunInput, RerunDecision])[] = [
  ['a response is relayed', input({ kind: 'response', status: 200, headers: {} }), { kind: 'relay' }],
  ['a timeout is a 504, never re-run', input({ kind: 'timeout' }), fail(ERRORS.UPSTREAM_TIMEOUT)],
  ['a client that left (cancelled) is never re-run', input({ kind: 'cancelled' }, { downstreamClosed: true }), fail(ERRORS.DOWNSTREAM_CLOSED)],
  ['cancelled on a later attempt too', input({ kind: 'cancelled' }, { attempt: 1, downstreamClosed: true }), fail(ERRORS.DOWNSTREAM_CLOSED)],
  // The first re-run is immediate, whatever the jitter.
  ['stale: first re-run at once', input(STALE, { method: 'POST', jitter: 0.99 }), rerun('stale', 0)],
  ['connect failure: first re-run at once', input(CONNECT, { method: 'POST' }), rerun('connect', 0)],
  ['unwritten reset: first re-run at once', input(RESET_UNWRITTEN, { method: 'POST' }), rerun('reset', 0)],
  // The second waits min + jitter × (max − min), whole milliseconds.
  ['stale again: second re-run after the minimum backoff', input(STALE, { attempt: 1, jitter: 0 }), rerun('stale', 10)],
  ['stale again: mid-range jitter', input(STALE, { attempt: 1, jitter: 0.5 }), rerun('stale', 30)],
  ['stale again: the maximum backoff', input(STALE, { attempt: 1, jitter: 0.999999 }), rerun('stale', 50)],
  ['third re-run with --max-reruns 3 also backs off', input(CONNECT, { attempt: 2, jitter: 0, policy: { maxReruns: 3 } }), rerun('connect', 10)],
  ['a fixed backoff (min = max)', input(STALE, { attempt: 1, jitter: 0.7, policy: { backoffMinMs: 25, backoffMaxMs: 25 } }), rerun('stale', 25)],
  // Written resets: only safe methods.
  ['written reset, GET: re-run', input(RESET_WRITTEN, { method: 'GET' }), rerun('reset', 0)],
  ['written reset, HEAD: re-run', input(RESET_WRITTEN, { method: 'HEAD' }), rerun('reset', 0)],
  ['written reset, OPTIONS: re-run', input(RESET_WRITTEN, { method: 'OPTIONS' }), rerun('reset', 0)],
  ['written reset, POST: 502', input(RESET_WRITTEN, { method: 'POST' }), fail(ERRORS.UPSTREAM_RESET_AFTER_SEND)],
  ['written reset, PUT: 502', input(RESET_WRITTEN, { method: 'PUT' }), fail(ERRORS.UPSTREAM_RESET_AFTER_SEND)],
  ['written reset, PATCH: 502', input(RESET_WRITTEN, { method: 'PATCH' }), fail(ERRORS.UPSTREAM_RESET_AFTER_SEND)],
  ['written reset, DELETE: 502', input(RESET_WRITTEN, { method: 'DELETE' }), fail(ERRORS.UPSTREAM_RESET_AFTER_SEND)],
  // The count limit.
  ['stale after the last re-run: exhausted (count)', input(STALE, { attempt: 2 }), fail(ERRORS.STALE_EXHAUSTED, 'count')],
  ['connect after the last re-run: exhausted (count)', input(CONNECT, { attempt: 2 }), fail(ERRORS.CONNECT_EXHAUSTED, 'count')],
  ['reset after the last re-run: exhausted (count)', input(RESET_UNWRITTEN, { attempt: 2 }), fail(ERRORS.RESET_EXHAUSTED, 'count')],
  ['--max-reruns 1: the second failure is exhausted', input(STALE, { attempt: 1, policy: { maxReruns: 1 } }), fail(ERRORS.STALE_EXHAUSTED, 'count')],
  ['--max-reruns 0: connect failure as such', input(CONNECT, { policy: { maxReruns: 0 } }), fail(ERRORS.UPSTREAM_CONNECT)],
  ['--max-reruns 0: reset as such', input(RESET_UNWRITTEN, { policy: { maxReruns: 0 } }), fail(ERRORS.UPSTREAM_RESET)],
  // The time budget, measured from the request's arrival, includes the backoff about to be waited.
  ['budget spent before the first re-run', input(STALE, { elapsedMs: 3000 }), fail(ERRORS.STALE_EXHAUSTED, 'budget')],
  ['budget still open for an immediate first re-run', input(STALE, { elapsedMs: 2999 }), rerun('stale', 0)],
  ['budget too short for the backoff', input(CONNECT, { attempt: 1, elapsedMs: 2970, jitter: 0.5 }), fail(ERRORS.CONNECT_EXHAUSTED, 'budget')],
  ['budget just long enough for the backoff', input(CONNECT, { attempt: 1, elapsedMs: 2969, jitter: 0.5 }), rerun('connect', 30)],
  ['budget spent, reset', input(RESET_UNWRITTEN, { elapsedMs: 10_000 }), fail(ERRORS.RESET_EXHAUSTED, 'budget')],
  // Bodies and clients.
  ['stale, body too large to replay', input(STALE, { method: 'POST', bodyReplayable: false }), fail(ERRORS.STALE_NOT_REPLAYABLE)],
  ['connect, body too large to replay', input(CONNECT, { method: 'POST', bodyReplayable: false }), fail(ERRORS.UPSTREAM_NOT_REPLAYABLE)],
  ['response already started', input(STALE, { responseStarted: true }), fail(ERRORS.STALE_EXHAUSTED)],
  ['response already started, connect', input(CONNECT, { responseStarted: true }), fail(ERRORS.UPSTREAM_CONNECT)],
  ['client gone before the outcome was handled', input(CONNECT, { downstreamClosed: true }), fail(ERRORS.DOWNSTREAM_CLOSED)],
  ['client gone wins over an exhausted budget', input(STALE, { downstreamClosed: true, elapsedMs: 10_000 }), fail(ERRORS.DOWNSTREAM_CLOSED)],
];

for (const [what, given, expected] of TABLE) {
  test(`shouldRerun: ${what}`, () => {
    assert.deepEqual(shouldRerun(given), expected);
  });
}

test('exhaustion and replay failures are 503s; a reset after send is 502; a timeout 504', () => {
  for (const e of [ERRORS.STALE_EXHAUSTED, ERRORS.CONNECT_EXHAUSTED, ERRORS.RESET_EXHAUSTED, ERRORS.STALE_NOT_REPLAYABLE, ERRORS.UPSTREAM_NOT_REPLAYABLE]) {
    assert.equal(e.status, 503, e.code);
  }
  assert.equal(ERRORS.UPSTREAM_RESET_AFTER_SEND.status, 502);
  assert.equal(ERRORS.UPSTREAM_TIMEOUT.status, 504);
  assert.match(ERRORS.STALE_NOT_REPLAYABLE.text, /too large to replay/);
});

test('backoffMs stays within [min, max] for every jitter, and is 0 for the first re-run', () => {
  for (let j = 0; j < 1; j += 0.01) {
    assert.equal(backoffMs(1, POLICY, j), 0);
    const d = backoffMs(2, POLICY, j);
    assert.ok(Number.isInteger(d) && d >= 10 && d <= 50, `jitter ${j} → ${d}`);
  }
  assert.equal(backoffMs(2, POLICY, -1), 10, 'out-of-range jitter is clamped');
  assert.equal(backoffMs(2, POLICY, 1), 50);
});

test('a cancelled attempt fails as the client closing, even before the response says so', () => {
  const d = shouldRerun(input({ kind: 'cancelled' }));
  assert.equal(d.kind === 'fail' && d.error, ERRORS.DOWNSTREAM_CLOSED);
});

test('only stale, connect failure and reset have a re-run reason', () => {
  assert.deepEqual(
    [
      STALE,
      CONNECT,
      RESET_WRITTEN,
      { kind: 'response', status: 200, headers: {} },
      { kind: 'timeout' },
      { kind: 'cancelled' },
      { kind: 'invalid-request', code: 'UND_ERR_INVALID_ARG' },
    ].map((o) => rerunReason(o as UpstreamOutcome)),
    ['stale', 'connect', 'reset', undefined, undefined, undefined, undefined],
  );
});
