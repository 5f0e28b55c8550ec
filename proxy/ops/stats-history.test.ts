import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeHistories, sinceParam, StatsHistory } from './stats-history.js';

function source() {
  const s = { requests: 0, hit: [0, 0, 0, 0], miss: [0, 0, 0, 0], rerun: [0, 0, 0, 0], none: [0, 0, 0, 0] };
  return { s, read: { requests: () => s.requests, durationCounts: () => ({ hit: s.hit, miss: s.miss, rerun: s.rerun, none: s.none }) } };
}

test('per-interval changes of the lifetime counters, on the interval grid, in a bounded ring', () => {
  const { s, read } = source();
  let now = 10_003;
  const h = new StatsHistory(read, { bounds: [0.001, 0.01, 0.1], capacity: 3, now: () => now });
  s.requests = 5;
  s.hit[0] = 4;
  s.miss[2] = 1;
  s.none[1] = 7; // not charted
  now = 11_004;
  h.sample();
  assert.deepEqual(h.document(), { intervalMs: 1000, capacity: 3, bounds: [0.001, 0.01, 0.1], samples: [{ at: 11_000, requests: 5, latency: { hit: [4], miss: [0, 0, 1] } }] });
  now = 12_001;
  h.sample();
  assert.deepEqual(h.document(11_000).samples, [{ at: 12_000, requests: 0, latency: {} }], 'an idle second; ?since= leaves older ones out');
  s.requests = 6;
  s.rerun[3] = 1;
  now = 12_400; // a late timer: the same grid point
  h.sample();
  assert.deepEqual(h.document(11_000).samples, [{ at: 12_000, requests: 1, latency: { rerun: [0, 0, 0, 1] } }]);
  for (const t of [13_000, 14_000, 15_000]) {
    now = t;
    h.sample();
  }
  assert.deepEqual(h.document().samples.map((x) => x.at), [13_000, 14_000, 15_000], 'the oldest dropped at capacity');
  assert.equal(sinceParam('12000'), 12_000);
  assert.equal(sinceParam('x'), -Infinity);
  assert.equal(sinceParam(undefined), -Infinity);
});

test('a cluster primary sums its workers\' samples point by point', () => {
  const doc = (samples: { at: number; requests: number; latency: Record<string, number[]> }[]) => ({ intervalMs: 1000, capacity: 2, bounds: [0.001, 0.01], samples });
  const merged = mergeHistories([
    doc([{ at: 1000, requests: 1, latency: {} }, { at: 2000, requests: 2, latency: { hit: [1, 1] } }]),
    doc([{ at: 2000, requests: 3, latency: { hit: [2], miss: [0, 0, 3] } }, { at: 3000, requests: 4, latency: {} }]),
  ]);
  assert.deepEqual(merged.samples, [
    { at: 2000, requests: 5, latency: { hit: [3, 1], miss: [0, 0, 3] } },
    { at: 3000, requests: 4, latency: {} },
  ]);
  assert.deepEqual(mergeHistories([]).samples, []);
});
