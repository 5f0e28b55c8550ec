/** The bound on misses in flight to ext_proc: the slots, the FIFO queue, its deadline, its bound. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OverloadTallies } from '../../ops/overload/tallies.js';
import { StreamQueue, type Admission } from './stream-queue.js';

const LONG = 60_000;

function queue(maxStreams: number, maxWaiting: number): { q: StreamQueue; t: OverloadTallies } {
  const t = new OverloadTallies();
  return { q: new StreamQueue({ maxStreams, maxWaiting }, t), t };
}

function admitted(a: Admission | Promise<Admission>): () => void {
  assert.ok(!(a instanceof Promise), 'admitted at once');
  assert.equal(a.kind, 'admitted');
  return a.kind === 'admitted' ? a.release : () => undefined;
}

test('up to the limit at once, no promise; then the next waits; a release hands the slot over', async () => {
  const { q, t } = queue(2, 8);
  const r1 = admitted(q.acquire(LONG));
  admitted(q.acquire(LONG));
  assert.equal(t.extprocStreamsInFlight, 2);
  const third = q.acquire(LONG);
  assert.ok(third instanceof Promise);
  assert.deepEqual([q.waiting, t.extprocQueueWaiting, t.extprocQueued], [1, 1, 1]);
  r1();
  r1(); // idempotent: one slot given back once
  const got = await third;
  assert.equal(got.kind, 'admitted');
  assert.deepEqual([t.extprocStreamsInFlight, q.waiting, t.extprocQueueWaiting], [2, 0, 0], 'the slot went to the waiter');
});

test('first in, first out; an arrival never overtakes the queue', async () => {
  const { q } = queue(1, 8);
  let release = admitted(q.acquire(LONG));
  const order: number[] = [];
  const waits = [1, 2, 3].map((n) =>
    (q.acquire(LONG) as Promise<Admission>).then((a) => {
      order.push(n);
      return a;
    }),
  );
  for (const wait of waits) {
    release();
    const a = await wait;
    assert.equal(a.kind, 'admitted');
    if (a.kind === 'admitted') release = a.release;
    const late = q.acquire(LONG);
    assert.ok(late instanceof Promise || q.waiting === 0, 'with the slot taken, a newcomer queues');
    if (late instanceof Promise) void late.then((x) => x.kind === 'admitted' && x.release());
  }
  release(); // the newcomers get the slot in turn and give it back: nothing is left waiting (no timer holds the file)
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(q.waiting, 0);
  assert.deepEqual(order, [1, 2, 3]);
});

test('a waiter whose time runs out gets timeout and leaves the queue (counted); no time at all: timeout at once', async () => {
  const { q, t } = queue(1, 8);
  const release = admitted(q.acquire(LONG));
  const a = await q.acquire(5);
  assert.equal(a.kind, 'timeout');
  assert.deepEqual([q.waiting, t.extprocQueueWaiting, t.shed.extprocQueueTimeout], [0, 0, 1]);
  const b = q.acquire(0);
  assert.ok(!(b instanceof Promise));
  assert.equal(b.kind, 'timeout');
  assert.equal(t.shed.extprocQueueTimeout, 2);
  release();
  assert.equal(t.extprocStreamsInFlight, 0, 'a slot nobody waits for is freed');
});

test('the queue is bounded: one more is answered full at once (counted)', async () => {
  const { q, t } = queue(1, 2);
  const release = admitted(q.acquire(LONG));
  const waiting = [q.acquire(LONG), q.acquire(LONG)];
  const over = q.acquire(LONG);
  assert.ok(!(over instanceof Promise));
  assert.equal(over.kind, 'full');
  assert.equal(t.shed.extprocQueueFull, 1);
  release();
  const first = await waiting[0];
  if (first?.kind === 'admitted') first.release();
  const second = await waiting[1];
  if (second?.kind === 'admitted') second.release();
  assert.deepEqual([t.extprocStreamsInFlight, t.extprocQueued], [0, 2]);
});

test('a waiter whose client leaves stops waiting at once and is skipped', async () => {
  const { q, t } = queue(1, 8);
  const release = admitted(q.acquire(LONG));
  const ac = new AbortController();
  const leaving = q.acquire(LONG, ac.signal);
  const staying = q.acquire(LONG);
  ac.abort();
  assert.equal((await leaving).kind, 'aborted');
  assert.equal(t.extprocQueueWaiting, 1);
  release();
  assert.equal((await staying).kind, 'admitted');
  const gone = new AbortController();
  gone.abort();
  const late = q.acquire(LONG, gone.signal);
  assert.ok(!(late instanceof Promise));
  assert.equal(late.kind, 'aborted', 'a client already gone does not queue');
});

test('0 streams: no bound, nothing counted', () => {
  const { q, t } = queue(0, 0);
  for (let i = 0; i < 100; i++) admitted(q.acquire(LONG));
  assert.deepEqual([t.extprocStreamsInFlight, t.extprocQueued], [0, 0]);
});
