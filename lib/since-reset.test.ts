import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SinceReset } from './since-reset.js';

test('reports the tallies minus the baseline taken at the last reset, leaving the tallies untouched', () => {
  const live = { requests: 0, byCode: {} as Record<string, number>, byStatus: new Float64Array(3), bump() {} };
  const since = new SinceReset(() => live);
  live.requests = 5;
  live.byCode.OK = 2;
  live.byStatus[1] = 4;
  assert.deepEqual(since.current(), { requests: 5, byCode: { OK: 2 }, byStatus: Float64Array.from([0, 4, 0]) });
  since.reset();
  assert.deepEqual(since.current(), { requests: 0, byCode: { OK: 0 }, byStatus: new Float64Array(3) });
  live.requests = 7;
  live.byCode.ABORTED = 1;
  live.byStatus[2] = 1;
  assert.deepEqual(since.current(), { requests: 2, byCode: { OK: 0, ABORTED: 1 }, byStatus: Float64Array.from([0, 0, 1]) }, 'a key new since the reset counts from zero');
  assert.equal(live.requests, 7, 'lifetime tallies never go down');
  assert.equal(live.byStatus[1], 4);
});

test('a fresh view of the tallies (read builds a new object) works the same', () => {
  let n = 3;
  const since = new SinceReset(() => ({ n }));
  n = 10;
  assert.deepEqual(since.current(), { n: 7 });
  since.reset();
  assert.deepEqual(since.current(), { n: 0 });
});
