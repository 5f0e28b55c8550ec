import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRng, shuffled, uniformSampler, zipfCdf, zipfSampler, zipfTopShare } from './sampling.js';

test('the same seed gives the same sequence; another seed a different one', () => {
  const a = createRng(42);
  const b = createRng(42);
  const c = createRng(43);
  const sa = Array.from({ length: 5 }, a);
  assert.deepEqual(sa, Array.from({ length: 5 }, b));
  assert.notDeepEqual(sa, Array.from({ length: 5 }, c));
  for (const v of sa) assert.ok(v >= 0 && v < 1);
});

test('uniformSampler covers every index and nothing else', () => {
  const pick = uniformSampler(50, createRng(1));
  const seen = new Map<number, number>();
  for (let i = 0; i < 20_000; i++) {
    const k = pick();
    seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  assert.equal(seen.size, 50);
  for (const [k, n] of seen) {
    assert.ok(k >= 0 && k < 50);
    assert.ok(n > 250 && n < 550, `index ${k} drawn ${n} times of an expected 400`);
  }
  assert.throws(() => uniformSampler(0, createRng(1)), RangeError);
});

test('zipfCdf is increasing and ends at exactly 1; s=0 is uniform', () => {
  const cdf = zipfCdf(1000, 1.1);
  for (let i = 1; i < cdf.length; i++) assert.ok((cdf[i] as number) > (cdf[i - 1] as number));
  assert.equal(cdf[999], 1);
  const flat = zipfCdf(4, 0);
  assert.deepEqual([...flat], [0.25, 0.5, 0.75, 1]);
});

test('zipfSampler draws key k with probability proportional to 1/(k+1)^s', () => {
  const n = 100;
  const s = 1;
  const pick = zipfSampler(n, s, createRng(7));
  const counts = new Array<number>(n).fill(0);
  const draws = 200_000;
  for (let i = 0; i < draws; i++) counts[pick()]!++;
  let h = 0;
  for (let k = 1; k <= n; k++) h += 1 / k;
  for (const k of [0, 1, 9, 99]) {
    const expected = draws / ((k + 1) ** s * h);
    const got = counts[k] as number;
    assert.ok(Math.abs(got - expected) < 5 * Math.sqrt(expected) + 5, `key ${k}: ${got} vs ${expected.toFixed(0)}`);
  }
  assert.ok((counts[0] as number) > (counts[1] as number) && (counts[1] as number) > (counts[50] as number));
});

test('zipfTopShare is the mass of the hottest keys', () => {
  assert.equal(zipfTopShare(100, 1, 0), 0);
  assert.equal(zipfTopShare(100, 1, 100), 1);
  assert.equal(zipfTopShare(100, 1, 500), 1);
  const a = zipfTopShare(10_000, 1, 2000);
  assert.ok(a > 0.8 && a < 0.9, `top 2000 of 10000 at s=1: ${a}`);
  assert.ok(zipfTopShare(10_000, 1, 100) < a);
});

test('shuffled permutes a copy', () => {
  const input = Array.from({ length: 20 }, (_, i) => i);
  const out = shuffled(input, createRng(3));
  assert.deepEqual([...out].sort((x, y) => x - y), input);
  assert.notDeepEqual(out, input);
  assert.deepEqual(input, Array.from({ length: 20 }, (_, i) => i));
});
