import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rerunReason, shouldRerun, type RerunInput } from './rerun.js';
import { ERRORS } from './errors.js';
import type { UpstreamOutcome } from '../api/filter.js';

const STALE: UpstreamOutcome = { kind: 'stale', status: 421 };
const CONNECT: UpstreamOutcome = { kind: 'connect-failed', code: 'ECONNREFUSED' };
const RESET_WRITTEN: UpstreamOutcome = { kind: 'reset', requestWritten: true, code: 'UND_ERR_SOCKET' };
const RESET_UNWRITTEN: UpstreamOutcome = { kind: 'reset', requestWritten: false, code: 'ECONNRESET' };

function input(outcome: UpstreamOutcome, over: Partial<RerunInput> = {}): RerunInput {
  return { outcome, attempt: 0, maxReruns: 1, method: 'GET', bodyReplayable: true, responseStarted: false, downstreamClosed: false, ...over };
}

test('a response is relayed, a timeout fails with 504 and is never re-run', () => {
  assert.deepEqual(shouldRerun(input({ kind: 'response', status: 200, headers: {} })), { kind: 'relay' });
  const t = shouldRerun(input({ kind: 'timeout' }));
  assert.equal(t.kind === 'fail' && t.error, ERRORS.UPSTREAM_TIMEOUT);
  assert.equal(ERRORS.UPSTREAM_TIMEOUT.status, 504);
});

test('stale, connect failure and an unwritten reset re-run with their reason', () => {
  assert.deepEqual(shouldRerun(input(STALE, { method: 'POST' })), { kind: 'rerun', reason: 'stale' });
  assert.deepEqual(shouldRerun(input(CONNECT, { method: 'POST' })), { kind: 'rerun', reason: 'connect' });
  assert.deepEqual(shouldRerun(input(RESET_UNWRITTEN, { method: 'POST' })), { kind: 'rerun', reason: 'reset' });
});

test('a reset after the request was written re-runs only GET, HEAD and OPTIONS', () => {
  for (const method of ['GET', 'HEAD', 'OPTIONS']) {
    assert.deepEqual(shouldRerun(input(RESET_WRITTEN, { method })), { kind: 'rerun', reason: 'reset' }, method);
  }
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    const d = shouldRerun(input(RESET_WRITTEN, { method }));
    assert.equal(d.kind === 'fail' && d.error, ERRORS.UPSTREAM_RESET_AFTER_SEND, method);
  }
  assert.equal(ERRORS.UPSTREAM_RESET_AFTER_SEND.status, 502);
});

test('re-runs are bounded by maxReruns; exhaustion is a 503 naming the reason', () => {
  const cases: [UpstreamOutcome, typeof ERRORS.STALE_EXHAUSTED][] = [
    [STALE, ERRORS.STALE_EXHAUSTED],
    [CONNECT, ERRORS.CONNECT_EXHAUSTED],
    [RESET_UNWRITTEN, ERRORS.RESET_EXHAUSTED],
  ];
  for (const [outcome, error] of cases) {
    const d = shouldRerun(input(outcome, { attempt: 1, maxReruns: 1 }));
    assert.equal(d.kind === 'fail' && d.error, error);
    assert.equal(error.status, 503);
    assert.equal(shouldRerun(input(outcome, { attempt: 1, maxReruns: 2 })).kind, 'rerun');
  }
  const none = shouldRerun(input(CONNECT, { maxReruns: 0 }));
  assert.equal(none.kind === 'fail' && none.error, ERRORS.UPSTREAM_CONNECT);
});

test('a body that cannot be replayed is never re-run: a clear 503 instead', () => {
  const stale = shouldRerun(input(STALE, { method: 'POST', bodyReplayable: false }));
  assert.equal(stale.kind === 'fail' && stale.error, ERRORS.STALE_NOT_REPLAYABLE);
  const connect = shouldRerun(input(CONNECT, { method: 'POST', bodyReplayable: false }));
  assert.equal(connect.kind === 'fail' && connect.error, ERRORS.UPSTREAM_NOT_REPLAYABLE);
  assert.match(ERRORS.STALE_NOT_REPLAYABLE.text, /too large to replay/);
});

test('nothing is re-run once the response started or the client left', () => {
  const started = shouldRerun(input(STALE, { responseStarted: true }));
  assert.equal(started.kind, 'fail');
  const gone = shouldRerun(input(CONNECT, { downstreamClosed: true }));
  assert.equal(gone.kind === 'fail' && gone.error, ERRORS.DOWNSTREAM_CLOSED);
});

test('a client that went away is never re-run, whatever the attempt', () => {
  for (const attempt of [0, 1]) {
    const d = shouldRerun(input({ kind: 'cancelled' }, { attempt, downstreamClosed: true }));
    assert.equal(d.kind === 'fail' && d.error, ERRORS.DOWNSTREAM_CLOSED);
  }
});

test('a cancelled attempt fails as the client closing, even before the response says so', () => {
  const d = shouldRerun(input({ kind: 'cancelled' }));
  assert.equal(d.kind === 'fail' && d.error, ERRORS.DOWNSTREAM_CLOSED);
});

test('only stale, connect failure and reset have a re-run reason', () => {
  assert.deepEqual(
    [STALE, CONNECT, RESET_WRITTEN, { kind: 'response', status: 200, headers: {} }, { kind: 'timeout' }, { kind: 'cancelled' }].map((o) =>
      rerunReason(o as UpstreamOutcome),
    ),
    ['stale', 'connect', 'reset', undefined, undefined, undefined],
  );
});
