import { test } from 'node:test';
import assert from 'node:assert/strict';
import { historyPoints, linePath, mergeHistory, niceCeil, readHistory, type HistoryDoc } from './history.js';

const doc = (samples: HistoryDoc['samples']): HistoryDoc => ({ intervalMs: 1000, capacity: 4, bounds: [0.001, 0.01, 0.1], samples });

test('chart points from /stats/history: requests per second, the hit ratio, p99 by outcome over the trailing seconds', () => {
  const points = historyPoints(
    doc([
      { at: 1000, requests: 10, latency: { hit: [9], miss: [0, 0, 1] } },
      { at: 2000, requests: 0, latency: {} },
      { at: 3000, requests: 4, latency: { hit: [0, 2], rerun: [0, 0, 0, 2] } },
    ]),
  );
  assert.deepEqual(points.map((p) => [p.at, p.rate, p.hitRatio]), [[1000, 10, 0.9], [2000, 0, null], [3000, 4, 0.5]]);
  assert.ok((points[0]?.p99HitMs as number) > 0.9 && (points[0]?.p99HitMs as number) <= 1, 'in the first bucket');
  assert.ok((points[0]?.p99MissMs as number) > 10 && (points[0]?.p99MissMs as number) <= 100);
  assert.equal(points[1]?.p99MissMs, points[0]?.p99MissMs, 'the window still holds the miss of the second before');
  assert.ok((points[2]?.p99HitMs as number) > 1, 'the window now holds slower hits');
  const ms = historyPoints({ ...doc([{ at: 9000, requests: 1, latency: { miss: [1] } }]), intervalMs: 500 });
  assert.equal(ms[0]?.rate, 2, 'per second, whatever the interval');
});

test('the page keeps what it was sent, newer samples replacing those at the same time, at most capacity', () => {
  const kept = doc([{ at: 1000, requests: 1, latency: {} }, { at: 2000, requests: 1, latency: {} }]);
  const merged = mergeHistory(kept, doc([{ at: 2000, requests: 5, latency: {} }, { at: 3000, requests: 1, latency: {} }, { at: 4000, requests: 1, latency: {} }]));
  assert.deepEqual(merged.samples.map((s) => [s.at, s.requests]), [[1000, 1], [2000, 5], [3000, 1], [4000, 1]]);
  assert.equal(mergeHistory(merged, doc([{ at: 5000, requests: 0, latency: {} }])).samples[0]?.at, 2000);
  assert.equal(readHistory({ intervalMs: 1000 }), undefined);
  assert.deepEqual(readHistory({ ...kept, samples: [{ at: 1, requests: 2, latency: { hit: [1, 'x'], miss: [3] } }, 'junk'] })?.samples, [{ at: 1, requests: 2, latency: { miss: [3] } }]);
});

test('SVG paths: scaled into the box, broken at a gap or a null, a lone point drawn as a dash', () => {
  const box = { from: 0, to: 3000, yMax: 10, width: 300, height: 100, gapMs: 2500 };
  assert.equal(linePath([{ at: 0, value: 0 }, { at: 1000, value: 5 }, { at: 3000, value: 20 }], box), 'M0,100 L100,50 L300,0');
  assert.equal(linePath([{ at: 0, value: 1 }, { at: 1000, value: null }, { at: 2000, value: 1 }, { at: 3000, value: 1 }], box), 'M-2,90 L2,90 M200,90 L300,90');
  assert.equal(linePath([{ at: 0, value: 1 }, { at: 3000, value: 1 }], box), 'M-2,90 L2,90 M298,90 L302,90', 'no sample for 3 s: not joined');
  assert.equal(linePath([], box), '');
  const log = { ...box, yMin: 0.1, yMax: 1000 };
  assert.equal(linePath([{ at: 0, value: 0.01 }, { at: 1000, value: 1 }, { at: 2000, value: 100 }, { at: 3000, value: 5000 }], log), 'M0,100 L100,75 L200,25 L300,0', 'log scale, clamped');
  assert.deepEqual([niceCeil(0), niceCeil(0.3), niceCeil(1), niceCeil(7), niceCeil(120)], [1, 0.5, 1, 10, 200]);
});
