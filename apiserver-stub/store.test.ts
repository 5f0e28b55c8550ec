import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_REQUEST_IDS_PER_ACTOR, Store, type WorkerLink } from './store.js';

const link = {} as WorkerLink;

test('an actor remembers at most MAX_REQUEST_IDS_PER_ACTOR delivered request ids; duplicates among them still count', () => {
  const store = new Store();
  const actor = store.createActor({ atespace: 'demo', name: 'a' });
  const worker = store.attachWorker('127.0.0.2', 8443, 1, link);
  const total = MAX_REQUEST_IDS_PER_ACTOR + 500;
  const ids = Array.from({ length: total }, (_, i) => `id-${i}`);
  store.recordServed(worker, { actors: [{ actor: actor.key, request_ids: ids, count: total, last_seq: total }], requests: total, misdirected: 0 });
  assert.equal(actor.requestIds.size, MAX_REQUEST_IDS_PER_ACTOR);
  assert.equal(actor.requestIds.has(`id-${total - 1}`), true);
  assert.equal(actor.requestIds.has('id-0'), false);
  store.recordServed(worker, { actors: [{ actor: actor.key, request_ids: [`id-${total - 1}`], count: 1, last_seq: total + 1 }], requests: 1, misdirected: 0 });
  assert.equal(store.duplicates, 1);
  assert.equal(store.deliveries, total + 1);
});
