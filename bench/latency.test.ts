import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LatencyRecorder, percentile, summarize } from './latency.js';

test('percentile is nearest-rank over an ascending array', () => {
  const v = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100
  assert.equal(percentile(v, 50), 50);
  assert.equal(percentile(v, 90), 90);
  assert.equal(percentile(v, 99), 99);
  assert.equal(percentile(v, 100), 100);
  assert.equal(percentile(v, 0), 1);
  assert.equal(percentile([], 50), 0);
  assert.equal(percentile([7], 99), 7);
});

test('summarize sorts a copy and keeps sub-millisecond resolution', () => {
  const input = [0.31, 0.12, 2.5, 0.2];
  const s = summarize(input);
  assert.deepEqual(input, [0.31, 0.12, 2.5, 0.2]);
  assert.equal(s.count, 4);
  assert.equal(s.p50Ms, 0.2);
  assert.equal(s.maxMs, 2.5);
  assert.ok(Math.abs(s.meanMs - 0.7825) < 1e-9);
  assert.deepEqual(summarize([]), { count: 0, meanMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, maxMs: 0 });
});

test('LatencyRecorder grows past its initial capacity and resets', () => {
  const r = new LatencyRecorder();
  for (let i = 0; i < 200_000; i++) r.record(i % 1000);
  assert.equal(r.count, 200_000);
  const s = r.summary();
  assert.equal(s.maxMs, 999);
  assert.equal(s.p50Ms, 499);
  r.reset();
  assert.equal(r.summary().count, 0);
});
