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

test('underLease holds the actor lease while its operation runs, refuses a second one, and releases it however the operation ends', async () => {
  const store = new Store();
  const actor = store.createActor({ atespace: 'demo', name: 'b' });
  let finish!: () => void;
  const running = store.underLease(actor, 'suspend', () => new Promise<void>((resolve) => (finish = resolve)));
  assert.equal(actor.lease?.op, 'suspend');
  await assert.rejects(store.underLease(actor, 'move', async () => 'never'), (err: Error & { code?: number }) => err.code === 10 && /another operation/.test(err.message));
  finish();
  await running;
  assert.equal(actor.lease, null);
  await assert.rejects(
    store.underLease(actor, 'delete', async () => {
      throw new Error('restore failed');
    }),
    /restore failed/,
  );
  assert.equal(actor.lease, null, 'a failed operation releases the lease too');
  assert.equal(await store.underLease(actor, 'resume', async () => 'resumed'), 'resumed');
});
