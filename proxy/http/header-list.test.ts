import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ForwardHeaders } from './header-list.js';

test('reads, sets, appends and deletes case-insensitively; set replaces every value', () => {
  const h = new ForwardHeaders(['host', 'h', 'x-a', '1', 'x-a', '2']);
  assert.equal(h.get('X-A'), '1');
  assert.deepEqual(h.getAll('x-a'), ['1', '2']);
  h.set('X-A', '3');
  assert.deepEqual(h.getAll('x-a'), ['3']);
  h.append('x-b', 'y');
  h.append('x-b', 'z');
  assert.deepEqual(h.getAll('x-b'), ['y', 'z']);
  h.delete('X-B');
  assert.equal(h.has('x-b'), false);
  assert.deepEqual([...h.entries()], [['host', 'h'], ['x-a', '3']]);
});

test('a new name is appended to the ingress list itself, and reset() cuts it back', () => {
  const original = ['host', 'h', 'x-a', '1'];
  const h = new ForwardHeaders(original);
  assert.equal(h.list, original);
  h.set('x-ate-target-port', '80');
  assert.equal(h.list, original, 'a header under a new name is not a reason to copy');
  assert.equal(h.get('x-ate-target-port'), '80');
  h.reset();
  assert.equal(h.list, original);
  assert.deepEqual(original, ['host', 'h', 'x-a', '1']);
  assert.equal(h.get('x-ate-target-port'), undefined);
});

test('copy-on-write: changing or removing an ingress header copies; reset() returns to the ingress list exactly', () => {
  const original = ['host', 'h', 'x-a', '1'];
  const h = new ForwardHeaders(original);
  h.append('x-b', '2'); // in place
  h.set('x-a', '9'); // an ingress header: copied first
  assert.notEqual(h.list, original);
  assert.deepEqual([...h.list], ['host', 'h', 'x-a', '9', 'x-b', '2']);
  h.append('x-c', '3'); // into the copy
  h.delete('x-b');
  assert.deepEqual([...h.list], ['host', 'h', 'x-a', '9', 'x-c', '3']);
  h.reset();
  assert.equal(h.list, original);
  assert.deepEqual(original, ['host', 'h', 'x-a', '1']);
  // and a second attempt starts from there again
  h.setTrusted('x-ate-target-port', '81');
  h.setTrusted('x-ate-target-port', '82');
  assert.deepEqual([...h.list], ['host', 'h', 'x-a', '1', 'x-ate-target-port', '82']);
});

test('invalid names or values are refused', () => {
  const h = new ForwardHeaders([]);
  assert.throws(() => h.set('bad name', 'v'));
  assert.throws(() => h.set('x-ok', 'line\nbreak'));
  assert.equal(h.list.length, 0);
});

test('setTrusted replaces every value like set, copies on write, and reset() undoes it', () => {
  const original = ['host', 'h', 'x-ate-target-port', '1', 'x-ate-target-port', '2'];
  const h = new ForwardHeaders(original);
  h.setTrusted('x-ate-target-port', '8443');
  assert.deepEqual(h.getAll('x-ate-target-port'), ['8443']);
  assert.deepEqual(original, ['host', 'h', 'x-ate-target-port', '1', 'x-ate-target-port', '2']);
  h.reset();
  h.setTrusted('x-new', 'v');
  assert.deepEqual([...h.list], ['host', 'h', 'x-ate-target-port', '1', 'x-ate-target-port', '2', 'x-new', 'v']);
});
