import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { RequestBody } from './body.js';

function source(): PassThrough {
  return new PassThrough();
}

async function collect(body: Buffer | AsyncIterable<Buffer>): Promise<string> {
  if (Buffer.isBuffer(body)) return body.toString();
  let s = '';
  for await (const c of body) s += c.toString();
  return s;
}

test('a body within the limit streams on the first attempt and is replayed whole (as one buffer) on the next', async () => {
  const src = source();
  const body = new RequestBody(src, 100);
  const first = body.forAttempt();
  assert.ok(!Buffer.isBuffer(first), 'the first attempt streams: nothing is waited for');
  src.write('hello ');
  src.end('world');
  assert.equal(await collect(first), 'hello world');
  assert.equal(body.complete, true);
  assert.equal(body.replayable, true);
  const second = body.forAttempt();
  assert.ok(Buffer.isBuffer(second));
  assert.equal(second.toString(), 'hello world');
});

test('a re-run in the middle of the body replays what was forwarded and continues with the rest', async () => {
  const src = source();
  const body = new RequestBody(src, 100);
  const first = body.forAttempt() as AsyncIterable<Buffer>;
  const it = first[Symbol.asyncIterator]();
  src.write('abc');
  assert.equal((await it.next()).value?.toString(), 'abc');
  // The upstream gave up (stale): a new attempt takes over the body.
  const second = body.forAttempt();
  assert.ok(!Buffer.isBuffer(second));
  assert.equal((await it.next()).done, true, 'the superseded attempt stops');
  src.write('def');
  src.end();
  assert.equal(await collect(second), 'abcdef');
});

test('a body over the limit streams through and cannot be replayed', async () => {
  const src = source();
  const body = new RequestBody(src, 5);
  const first = body.forAttempt();
  src.write('0123');
  src.write('4567');
  src.end('89');
  assert.equal(await collect(first), '0123456789');
  assert.equal(body.complete, true, 'all 10 bytes were received');
  assert.equal(body.replayable, false);
  assert.throws(() => body.forAttempt(), /not replayable/);
});

test('a client that aborts mid-body fails the attempt and the body is no longer replayable', async () => {
  const src = source();
  const body = new RequestBody(src, 100);
  const first = body.forAttempt();
  src.write('abc');
  setImmediate(() => src.destroy(new Error('aborted')));
  await assert.rejects(collect(first), /aborted/);
  assert.equal(body.replayable, false);
});
