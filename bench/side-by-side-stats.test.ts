import { test } from 'node:test';
import assert from 'node:assert/strict';
import { perArm, ratio, spread, startOrder, type Round } from './side-by-side-stats.js';

test('spread: median, mean, sample sd and standard error', () => {
  const cases: { values: number[]; median: number; mean: number; sd: number }[] = [
    { values: [4], median: 4, mean: 4, sd: 0 },
    { values: [1, 3], median: 2, mean: 2, sd: Math.SQRT2 },
    { values: [5, 1, 3], median: 3, mean: 3, sd: 2 },
    { values: [2, 4, 4, 4, 5, 5, 7, 9], median: 4.5, mean: 5, sd: Math.sqrt(32 / 7) },
  ];
  for (const c of cases) {
    const s = spread(c.values);
    assert.equal(s.n, c.values.length);
    assert.equal(s.median, c.median, `median of ${c.values}`);
    assert.equal(s.mean, c.mean, `mean of ${c.values}`);
    assert.ok(Math.abs(s.sd - c.sd) < 1e-12, `sd of ${c.values}: ${s.sd}`);
    assert.ok(Math.abs(s.se - c.sd / Math.sqrt(c.values.length)) < 1e-12);
  }
  const none = spread([]);
  assert.equal(none.n, 0);
  assert.ok(Number.isNaN(none.mean));
});

test('ratio: taken inside each round, so a slow round moves both sides and the ratio stays', () => {
  const rounds = [
    { floor: 50, C: 60 },
    { floor: 100, C: 120 }, // the whole machine twice as slow: the same ratio
    { floor: 50, C: 55 },
  ];
  const r = ratio(rounds, 'C', 'floor');
  assert.equal(r.arm, 'C');
  assert.equal(r.base, 'floor');
  assert.equal(r.n, 3);
  assert.equal(r.median, 1.2);
  assert.ok(Math.abs(r.mean - (1.2 + 1.2 + 1.1) / 3) < 1e-12);
});

test('ratio and perArm skip a round where a side has no usable value (no requests: 0, NaN, Infinity, absent)', () => {
  const rounds: Round[] = [{ floor: 50, C: 60 }, { floor: 0, C: 60 }, { floor: 50, C: Number.POSITIVE_INFINITY }, { floor: 50 }, { floor: 40, C: Number.NaN }];
  assert.equal(ratio(rounds, 'C', 'floor').n, 1);
  const arms = perArm(rounds, ['floor', 'C']);
  assert.equal(arms['floor']?.n, 4);
  assert.equal(arms['floor']?.median, 50);
  assert.equal(arms['C']?.n, 2, 'the round with floor 0 still counts for C alone');
});

test('startOrder: every permutation once in n! rounds, then again', () => {
  const items = ['floor', 'C', 'C copy'];
  const seen = new Set<string>();
  for (let k = 0; k < 6; k++) {
    const order = startOrder(items, k);
    assert.deepEqual([...order].sort(), [...items].sort(), 'each arm once');
    seen.add(order.join(','));
  }
  assert.equal(seen.size, 6);
  assert.deepEqual(startOrder(items, 6), startOrder(items, 0));
  const firsts = new Set([0, 1, 2].map((k) => startOrder(items, k)[0]));
  assert.equal(firsts.size, 3, 'each arm starts first in turn');
});
