import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ActivationTable } from './activations.js';

test('the request ids an activation keeps until the next report are capped; the count is not', () => {
  const table = new ActivationTable(1, 100);
  let batchesFull = 0;
  table.onBatchFull = () => batchesFull++;
  const a = table.activate({ atespace: 'demo', name: 'a' }, 0);
  for (let i = 0; i < 1000; i++) a.deliver(`id-${i}`);
  assert.equal(a.pendingIds.length, 100);
  assert.equal(a.pendingCount, 1000);
  assert.equal(batchesFull, 1, 'a report was asked for when the batch filled');
  const served = table.drain();
  assert.equal(served?.actors[0]?.request_ids.length, 100);
  assert.equal(served?.actors[0]?.count, 1000);
  a.deliver('after');
  assert.deepEqual(a.pendingIds, ['after']);
});

test('without a report batch the ids are still capped', () => {
  const table = new ActivationTable(1);
  const a = table.activate({ atespace: 'demo', name: 'a' }, 0);
  for (let i = 0; i < 10_000; i++) a.deliver(String(i));
  assert.equal(a.pendingIds.length, table.pendingIdLimit);
  assert.ok(table.pendingIdLimit < 10_000);
});
