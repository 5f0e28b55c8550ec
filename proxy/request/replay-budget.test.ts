/** The process-wide replay budget, and how a request body takes from it and gives back. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { RequestBody } from './body.js';
import { ReplayBudget } from './replay-budget.js';

async function collect(body: Buffer | AsyncIterable<Buffer>): Promise<string> {
  if (Buffer.isBuffer(body)) return body.toString();
  let s = '';
  for await (const c of body) s += c.toString();
  return s;
}

/** Writes `chunks` and ends the source (written before the body reads, they arrive as one chunk). */
function feed(src: PassThrough, chunks: readonly string[]): void {
  for (const c of chunks) src.write(c);
  src.end();
}

test('acquire and release: within the capacity, up to it exactly, never beyond; 0 is no budget', () => {
  const b = new ReplayBudget(10);
  assert.equal(b.tryAcquire(6), true);
  assert.equal(b.tryAcquire(4), true, 'up to the capacity exactly');
  assert.equal(b.tryAcquire(1), false);
  assert.equal(b.inUseBytes, 10);
  b.release(6);
  assert.equal(b.tryAcquire(5), true);
  assert.equal(b.inUseBytes, 9);
  const none = new ReplayBudget(0);
  assert.equal(none.tryAcquire(1e12), true, '0: no process-wide budget');
  assert.throws(() => new ReplayBudget(-1), RangeError);
});

test('a body within the budget is retained and replayable; its bytes go back when the request finishes', async () => {
  const budget = new ReplayBudget(100);
  const src = new PassThrough();
  const body = new RequestBody(src, 1000, budget);
  const first = body.forAttempt();
  feed(src, ['hello ', 'world']);
  assert.equal(await collect(first), 'hello world');
  assert.equal(body.replayable, true);
  assert.deepEqual([budget.inUseBytes, budget.bodies, body.chargedBytes], [11, 1, 11]);
  assert.equal((body.forAttempt() as Buffer).toString(), 'hello world', 'replayed whole');
  body.release();
  body.release();
  assert.deepEqual([budget.inUseBytes, budget.bodies, budget.streamedWithoutReplay], [0, 0, 0], 'released once, all of it');
});

test('a body that finds the budget spent streams through whole, is not replayable, is counted, and holds nothing once forwarded', async () => {
  const budget = new ReplayBudget(8);
  const held = budget.tryAcquire(4); // another request's body holds half of it
  assert.equal(held, true);
  const src = new PassThrough();
  const body = new RequestBody(src, 1000, budget);
  const first = body.forAttempt();
  const it = (first as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  src.write('abc');
  assert.equal((await it.next()).value?.toString(), 'abc');
  assert.deepEqual([budget.inUseBytes, body.replayable], [7, true], 'the first 3 bytes fit');
  src.write('defg');
  assert.equal((await it.next()).value?.toString(), 'defg', 'the chunk that did not fit is forwarded all the same');
  assert.equal(body.replayable, false);
  assert.equal(body.overBudget, true);
  assert.equal(budget.streamedWithoutReplay, 1);
  assert.equal(budget.inUseBytes, 4, 'what it had retained went back as soon as it stopped being replayable');
  src.end('hij');
  let rest = '';
  for (let r = await it.next(); r.done !== true; r = await it.next()) rest += r.value.toString();
  assert.equal(rest, 'hij');
  assert.equal(budget.inUseBytes, 4);
  assert.equal(budget.streamedWithoutReplay, 1, 'counted once per body');
  assert.throws(() => body.forAttempt(), /not replayable/);
  body.release();
  assert.deepEqual([budget.inUseBytes, budget.bodies], [4, 0]);
});

test('a body over its own limit streams through without counting against the budget; the bytes it retained go back', async () => {
  const budget = new ReplayBudget(100);
  const src = new PassThrough();
  const body = new RequestBody(src, 5, budget);
  const it = (body.forAttempt() as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  src.write('0123');
  assert.equal((await it.next()).value?.toString(), '0123');
  assert.equal(budget.inUseBytes, 4, 'within its own limit: retained');
  src.end('456789');
  assert.equal((await it.next()).value?.toString(), '456789');
  assert.equal((await it.next()).done, true);
  assert.equal(body.replayable, false);
  assert.equal(body.overBudget, false);
  assert.deepEqual([budget.inUseBytes, budget.bodies, budget.streamedWithoutReplay], [0, 0, 0]);
});

test('stopRetaining (the response head was relayed) gives the forwarded bytes back at once and the rest as they are forwarded', async () => {
  const budget = new ReplayBudget(100);
  const src = new PassThrough();
  const body = new RequestBody(src, 100, budget);
  const it = (body.forAttempt() as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  src.write('abc');
  assert.equal((await it.next()).value?.toString(), 'abc');
  assert.equal(budget.inUseBytes, 3);
  body.stopRetaining();
  assert.deepEqual([budget.inUseBytes, body.replayable], [0, false]);
  src.end('def');
  assert.equal((await it.next()).value?.toString(), 'def', 'the rest still streams');
  assert.equal((await it.next()).done, true);
  assert.equal(budget.inUseBytes, 0, 'the rest was never charged');
});

test('a whole-body read (readBody, BUFFERED) that finds the budget spent returns undefined as overBudget, counted once', async () => {
  const budget = new ReplayBudget(4);
  const src = new PassThrough();
  const body = new RequestBody(src, 1000, budget);
  feed(src, ['abc', 'def']);
  assert.equal(await body.buffered(), undefined);
  assert.equal(await body.buffered(), undefined);
  assert.equal(body.overBudget, true);
  assert.equal(budget.bufferedRefused, 1);
  body.release();
  assert.equal(budget.inUseBytes, 0);
});

test('a buffered body replaced by a processor keeps the replacement charged, even beyond the capacity (counted)', async () => {
  const budget = new ReplayBudget(8);
  const src = new PassThrough();
  const body = new RequestBody(src, 1000, budget);
  feed(src, ['abc']);
  assert.equal((await body.buffered())?.toString(), 'abc');
  assert.equal(budget.inUseBytes, 3);
  body.replace(Buffer.from('0123456789'));
  assert.deepEqual([budget.inUseBytes, budget.forcedBytes, budget.bodies], [10, 2, 1]);
  assert.equal((body.forAttempt() as Buffer).toString(), '0123456789');
  body.release();
  assert.deepEqual([budget.inUseBytes, budget.bodies], [0, 0]);
});

test('memory stays within the budget whatever the concurrency: 50 bodies of 10 bytes against 100', async () => {
  const budget = new ReplayBudget(100);
  const bodies = Array.from({ length: 50 }, () => {
    const src = new PassThrough();
    return { src, body: new RequestBody(src, 1000, budget) };
  });
  const reads = bodies.map(({ src, body }) => {
    const read = collect(body.forAttempt());
    feed(src, ['01234', '56789']);
    return read;
  });
  for (const text of await Promise.all(reads)) assert.equal(text, '0123456789', 'every body delivered whole');
  assert.ok(budget.inUseBytes <= 100, `in use ${budget.inUseBytes}`);
  const retained = bodies.filter(({ body }) => body.replayable).length;
  assert.equal(retained, 10, 'ten bodies of ten bytes fill the budget');
  assert.equal(budget.streamedWithoutReplay, 40);
  for (const { body } of bodies) body.release();
  assert.deepEqual([budget.inUseBytes, budget.bodies], [0, 0]);
});

test('backpressure holds with or without room in the budget: the client is read only as fast as the attempt takes chunks', async () => {
  for (const capacity of [1 << 20, 1]) {
    let produced = 0;
    // A client that always has more: each read of it produces one 16 KiB chunk (as many as asked for).
    const client = new Readable({
      highWaterMark: 1,
      read() {
        produced++;
        this.push(Buffer.alloc(16 * 1024, 120));
      },
    });
    const body = new RequestBody(client, 1 << 20, new ReplayBudget(capacity));
    const it = (body.forAttempt() as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    for (let taken = 1; taken <= 20; taken++) {
      await it.next();
      // node's stream reads ahead up to its high-water mark (one chunk here); the body itself never reads ahead.
      assert.ok(produced <= taken + 2, `budget ${capacity}: ${produced} chunks read from the client after ${taken} taken`);
    }
    client.destroy();
  }
});
