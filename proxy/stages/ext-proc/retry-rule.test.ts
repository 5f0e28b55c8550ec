import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retryDelayMs, RETRY_BASE_MS, RETRY_MAX_MS, shouldRetryStream, type StreamRetryDecision, type StreamRetryInput } from './retry-rule.js';
import type { MessageResult } from './client.js';

const unavailable: MessageResult = { kind: 'error', code: 'UNAVAILABLE', details: 'No connection established' };
const base: StreamRetryInput = {
  result: unavailable,
  failureModeAllow: false,
  bodyReplayable: true,
  elapsedMs: 10,
  retries: 0,
  waiting: 0,
  policy: { budgetMs: 3000, maxWaiting: 1024 },
  jitter: 0,
};

test('the stream retry rule, as a table', () => {
  const rows: [string, Partial<StreamRetryInput>, StreamRetryDecision][] = [
    ['the stream could not be opened: retry after the base wait (its upper half)', {}, { kind: 'retry', delayMs: Math.ceil(RETRY_BASE_MS / 2) }],
    ['third retry: the wait doubled twice', { retries: 2, jitter: 0.999999 }, { kind: 'retry', delayMs: 4 * RETRY_BASE_MS }],
    ['many retries: the wait stops at the cap', { retries: 12, jitter: 0.999999 }, { kind: 'retry', delayMs: RETRY_MAX_MS }],
    ['an answer is never retried', { result: { kind: 'response', response: {} } }, { kind: 'give-up', why: 'not-retryable' }],
    ['the processor ended the stream with OK: continue without it', { result: { kind: 'closed' } }, { kind: 'give-up', why: 'not-retryable' }],
    ['a message timeout is the processor being slow, not gone', { result: { kind: 'timeout' } }, { kind: 'give-up', why: 'not-retryable' }],
    ['the connection under the stream failed (a GOAWAY with an error): retry', { result: { kind: 'error', code: 'INTERNAL', details: 'Received RST_STREAM with code 2 triggered by internal client error: Session closed with error code 2', connectionLost: true } }, { kind: 'retry', delayMs: Math.ceil(RETRY_BASE_MS / 2) }],
    ['a lost connection within the cap and the budget only', { result: { kind: 'error', code: 'INTERNAL', details: 'x', connectionLost: true }, waiting: 1024 }, { kind: 'give-up', why: 'cap' }],
    ['another gRPC code is the processor\'s answer', { result: { kind: 'error', code: 'INTERNAL', details: 'boom' } }, { kind: 'give-up', why: 'not-retryable' }],
    ['the client left', { result: { kind: 'aborted' } }, { kind: 'give-up', why: 'not-retryable' }],
    ['failure_mode_allow: the processor is optional, continue at once', { failureModeAllow: true }, { kind: 'give-up', why: 'failure-mode-allow' }],
    ['a body that can no longer be replayed', { bodyReplayable: false }, { kind: 'give-up', why: 'not-replayable' }],
    ['the cap of waiting requests is reached: fail at once', { waiting: 1024 }, { kind: 'give-up', why: 'cap' }],
    ['a request already retrying keeps its place under the cap', { waiting: 1024, retries: 1 }, { kind: 'retry', delayMs: RETRY_BASE_MS }],
    ['no retries at all with a cap of 0', { policy: { budgetMs: 3000, maxWaiting: 0 } }, { kind: 'give-up', why: 'cap' }],
    ['the retry could not start within the budget', { elapsedMs: 2990 }, { kind: 'give-up', why: 'budget' }],
    ['the budget is spent', { elapsedMs: 3000, retries: 5 }, { kind: 'give-up', why: 'budget' }],
    ['a retry that starts just within the budget', { elapsedMs: 3000 - 14 }, { kind: 'retry', delayMs: 13 }],
  ];
  for (const [name, over, want] of rows) assert.deepEqual(shouldRetryStream({ ...base, ...over }), want, name);
});

test('retry waits: the upper half of min(cap, base × 2^n)', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((n) => retryDelayMs(n, 0)), [13, 25, 50, 100, 125, 125]);
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((n) => retryDelayMs(n, 0.999999)), [25, 50, 100, 200, 250, 250]);
});
