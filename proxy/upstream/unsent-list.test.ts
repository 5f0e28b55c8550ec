import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnsentList, type UnsentAttempt } from './unsent-list.js';

function attempt(name: string): UnsentAttempt & { readonly name: string } {
  return { name, eject: () => undefined, unsentList: undefined, unsentPrev: undefined, unsentNext: undefined };
}

const names = (xs: readonly UnsentAttempt[]): string[] => xs.map((x) => (x as UnsentAttempt & { name: string }).name);

test('takeAll returns what is on the list oldest first and empties it', () => {
  const list = new UnsentList();
  const [a, b, c] = [attempt('a'), attempt('b'), attempt('c')];
  list.add(a);
  list.add(b);
  list.add(c);
  assert.equal(list.size, 3);
  assert.deepEqual(names(list.takeAll()), ['a', 'b', 'c']);
  assert.equal(list.size, 0);
  assert.deepEqual(list.takeAll(), []);
  assert.equal(a.unsentList, undefined, 'taken attempts are on no list');
});

test('removing the first, a middle and the last attempt keeps the order of the others', () => {
  for (const [gone, left] of [
    ['a', ['b', 'c', 'd']],
    ['b', ['a', 'c', 'd']],
    ['d', ['a', 'b', 'c']],
  ] as const) {
    const list = new UnsentList();
    const all = ['a', 'b', 'c', 'd'].map(attempt);
    for (const x of all) list.add(x);
    list.delete(all.find((x) => x.name === gone) as UnsentAttempt);
    assert.equal(list.size, 3, gone);
    assert.deepEqual(names(list.takeAll()), left, `without ${gone}`);
  }
});

test('delete is a no-op twice and for an attempt on another list; add is a no-op for one already on a list', () => {
  const one = new UnsentList();
  const other = new UnsentList();
  const [a, b] = [attempt('a'), attempt('b')];
  one.add(a);
  other.add(b);
  other.delete(a);
  assert.equal(one.size, 1);
  assert.equal(a.unsentList, one);
  one.delete(a);
  one.delete(a);
  assert.equal(one.size, 0);
  other.add(b);
  assert.equal(other.size, 1, 'added once');
  one.add(b);
  assert.equal(one.size, 0, 'an attempt on another list is not moved');
  assert.deepEqual(names(other.takeAll()), ['b']);
});

test('an attempt removed and added again goes to the end', () => {
  const list = new UnsentList();
  const [a, b] = [attempt('a'), attempt('b')];
  list.add(a);
  list.add(b);
  list.delete(a);
  list.add(a);
  assert.deepEqual(names(list.takeAll()), ['b', 'a']);
});
