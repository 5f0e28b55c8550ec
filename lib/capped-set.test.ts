import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CappedSet } from './capped-set.js';

test('CappedSet keeps at most its limit, forgetting the oldest first', () => {
  const s = new CappedSet<string>(3);
  for (const v of ['a', 'b', 'c', 'b', 'd', 'e']) s.add(v);
  assert.equal(s.size, 3);
  assert.deepEqual([...s], ['c', 'd', 'e']);
  assert.equal(s.has('a'), false);
  assert.equal(s.evicted, 2);
  s.clear();
  assert.equal(s.size, 0);
  assert.equal(s.evicted, 0);
});

test('CappedSet stays bounded under many distinct values', () => {
  const s = new CappedSet<number>(1000);
  for (let i = 0; i < 100_000; i++) s.add(i);
  assert.equal(s.size, 1000);
  assert.equal(s.evicted, 99_000);
  assert.equal(s.has(99_999), true);
  assert.equal(s.has(98_999), false);
});

test('CappedSet refuses a limit below one', () => {
  assert.throws(() => new CappedSet(0), RangeError);
});
