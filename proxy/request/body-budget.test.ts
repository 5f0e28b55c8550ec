/** The budget of request bodies in flight, how a request body reports to it, and the GC pacer it feeds. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { RequestBody } from './body.js';
import { BODY_RESERVATION_BYTES, BodyBudget } from './body-budget.js';
import { GcPacer } from '../../lib/gc-pacer.js';

const SHARE = BODY_RESERVATION_BYTES;

test('shares: a declared length below the reservation reserves itself; larger, unknown or chunked reserve the reservation', () => {
  assert.equal(BodyBudget.shareOf(1000), 1000);
  assert.equal(BodyBudget.shareOf(0), 0);
  assert.equal(BodyBudget.shareOf(SHARE), SHARE);
  assert.equal(BodyBudget.shareOf(64 * 2 ** 20), SHARE);
  assert.equal(BodyBudget.shareOf(undefined), SHARE);
});

test('admit up to the capacity exactly, refuse beyond it (counted), settle gives the share back once; 0 is no budget', () => {
  const b = new BodyBudget(2 * SHARE);
  const one = b.admit(undefined);
  const two = b.admit(10 * SHARE);
  assert.ok(one !== undefined && two !== undefined);
  assert.equal(b.inUseBytes, 2 * SHARE);
  assert.equal(b.bodies, 2);
  assert.equal(b.admit(undefined), undefined);
  assert.equal(b.admit(1), undefined, 'not even a byte fits');
  assert.equal(b.refused, 2);
  one.settled();
  one.settled();
  assert.equal(b.inUseBytes, SHARE, 'settled twice, given back once');
  assert.equal(b.bodies, 1);
  assert.ok(b.admit(100) !== undefined);
  assert.equal(b.inUseBytes, SHARE + 100);
  const none = new BodyBudget(0);
  for (let i = 0; i < 1000; i++) assert.ok(none.admit(undefined) !== undefined, '0: every body admitted');
  assert.throws(() => new BodyBudget(-1), RangeError);
});

test('a request body settles its share when it has been received whole, before anything reads it again', async () => {
  const b = new BodyBudget(SHARE);
  const src = new PassThrough();
  const body = new RequestBody(src, 1000, undefined, b.admit(undefined));
  const stream = body.forAttempt() as AsyncIterable<Buffer>;
  src.write('abc');
  src.end('def');
  let s = '';
  for await (const c of stream) s += c.toString();
  assert.equal(s, 'abcdef');
  assert.equal(b.inUseBytes, 0, 'received whole: the share is back');
  assert.equal(b.bodies, 0);
  body.release();
  assert.equal(b.inUseBytes, 0, 'release after settling gives nothing back twice');
});

test('a body the client abandons, or a request that ends before its body, settles its share too', async () => {
  const b = new BodyBudget(2 * SHARE);
  const failing = new PassThrough();
  const failed = new RequestBody(failing, 1000, undefined, b.admit(undefined));
  const stream = failed.forAttempt() as AsyncIterable<Buffer>;
  failing.write('x');
  setImmediate(() => failing.destroy(new Error('client went away')));
  await assert.rejects(async () => {
    for await (const _ of stream) void _;
  });
  assert.equal(b.bodies, 0, 'the failed body settled');
  const unread = new RequestBody(new PassThrough(), 1000, undefined, b.admit(undefined));
  assert.equal(b.bodies, 1);
  unread.release();
  assert.equal(b.bodies, 0);
  assert.equal(b.inUseBytes, 0);
});

test('the GC pacer collects once per everyBytes of bodies received, and never with 0', async () => {
  let collections = 0;
  const pacer = new GcPacer(100, () => collections++);
  const b = new BodyBudget(0, pacer);
  const src = new PassThrough();
  const body = new RequestBody(src, 10, undefined, b.admit(undefined));
  const stream = body.forAttempt() as AsyncIterable<Buffer>;
  const done = (async () => {
    for await (const _ of stream) void _;
  })();
  for (let i = 0; i < 6; i++) {
    src.write(Buffer.alloc(50));
    await new Promise((r) => setImmediate(r));
  }
  src.end();
  await done;
  assert.equal(collections, 3, '300 bytes: three collections');
  assert.equal(pacer.collections, 3);
  const off = new GcPacer(0, () => assert.fail('never'));
  off.add(1e9);
  assert.equal(off.collections, 0);
});

test('the GC pacer reaches V8 young-generation collection without a global gc', () => {
  const pacer = new GcPacer(1);
  pacer.add(1);
  assert.equal(pacer.collections, 1);
  assert.equal((globalThis as { gc?: unknown }).gc, undefined, 'no global gc appears');
});
