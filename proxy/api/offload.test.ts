import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDecision, decisionProblem, transferableCopy } from './offload.js';
import { fakeRequest } from '../../kit/index.js';

test('a continue decision removes, then sets, request headers through their checks', () => {
  const ctx = fakeRequest({ headers: { 'x-a': '1', 'x-b': '2' } });
  assert.deepEqual(applyDecision(ctx, { kind: 'continue', removeHeaders: ['x-a', 'x-b'], setHeaders: { 'x-b': '3' } }), { kind: 'continue' });
  assert.deepEqual([ctx.headers.get('x-a'), ctx.headers.get('x-b')], [undefined, '3']);
  assert.throws(() => applyDecision(ctx, { kind: 'continue', setHeaders: { host: 'elsewhere' } }), TypeError);
});

test('a reply decision becomes a local reply; anything else is the filter failing', () => {
  const ctx = fakeRequest({});
  assert.deepEqual(applyDecision(ctx, { kind: 'reply', reply: { status: 400, body: 'no' } }), { kind: 'reply', reply: { status: 400, body: 'no' } });
  for (const bad of [undefined, 42, { kind: 'maybe' }, { kind: 'reply' }, { kind: 'continue', setHeaders: { a: 1 } }, { kind: 'continue', removeHeaders: 'x' }]) {
    assert.notEqual(decisionProblem(bad), undefined, JSON.stringify(bad));
    assert.throws(() => applyDecision(ctx, bad as never), TypeError);
  }
});

test('transferableCopy owns its buffer: transferring it leaves the original intact', () => {
  const original = Buffer.from('body');
  const copy = transferableCopy(original);
  structuredClone(copy, { transfer: [copy.buffer] });
  assert.equal(copy.byteLength, 0);
  assert.equal(original.toString(), 'body');
});
