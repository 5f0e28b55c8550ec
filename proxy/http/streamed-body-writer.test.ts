/**
 * A streamed local reply on a downstream exchange (no socket): the head has no content-length; one piece is
 * asked for at a time, and none while the client cannot take more; the end carries the trailers; a broken source
 * aborts the response and says why; a client that goes away (even while the writer waits for it) cancels the
 * source; a reply that is not written, or whose head is refused, cancels it too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamedBody, StreamedPiece } from '../api/filter.js';
import { RecordingExchange } from '../testing/recording-exchange.js';
import { waitFor } from '../../lib/testing/wait.js';
import { writeLocalReply } from './local-reply.js';

/** A source that hands out `pieces` in order and counts what it was asked. */
function source(pieces: StreamedPiece[]): StreamedBody & { asked: number; cancelled: number } {
  return {
    kind: 'streamed',
    asked: 0,
    cancelled: 0,
    async next() {
      this.asked++;
      return pieces.shift() ?? { kind: 'end' };
    },
    cancel() {
      this.cancelled++;
    },
  };
}

const data = (text: string): StreamedPiece => ({ kind: 'data', data: Buffer.from(text) });

/** An exchange whose client takes one chunk, then is full until the test calls `drain()`. */
class SlowExchange extends RecordingExchange {
  #resume: (() => void) | undefined;
  override sendBody(chunk: Buffer): boolean {
    super.sendBody(chunk);
    return false;
  }
  override whenWritable(resume: () => void): void {
    this.#resume = resume;
  }
  get waiting(): boolean {
    return this.#resume !== undefined;
  }
  drain(): void {
    const resume = this.#resume;
    this.#resume = undefined;
    resume?.();
  }
}

test('the head without content-length, each piece in order, the end with its trailers; the source released', async () => {
  const exchange = new RecordingExchange();
  const body = source([data('one '), data('two'), { kind: 'end', trailers: { 'x-sum': '7' } }]);
  assert.deepEqual(writeLocalReply(exchange, { status: 206, headers: { 'content-type': 'text/plain', 'content-length': '99' }, body }), { kind: 'written', bytes: 0 });
  assert.equal(exchange.head?.status, 206);
  assert.deepEqual(exchange.head?.headers, ['content-type', 'text/plain'], 'no content-length: the length is not known');
  await waitFor(() => exchange.ended, 2000, 'the response to end');
  assert.equal(exchange.body, 'one two');
  assert.deepEqual(exchange.trailers, [['x-sum', '7']]);
  assert.equal(exchange.complete, true);
  assert.equal(body.cancelled, 1, 'the source is released once written');
});

test('backpressure: no next piece is asked for until the client can take more', async () => {
  const exchange = new SlowExchange();
  const body = source([data('a'), data('b'), data('c')]);
  writeLocalReply(exchange, { status: 200, body });
  await waitFor(() => exchange.waiting, 2000, 'the writer to wait for the client');
  assert.equal(body.asked, 1);
  assert.equal(exchange.body, 'a');
  exchange.drain();
  await waitFor(() => exchange.waiting, 2000, 'the writer to wait again');
  assert.equal(body.asked, 2);
  assert.equal(exchange.body, 'ab');
  exchange.drain();
  await waitFor(() => exchange.waiting, 2000, 'the writer to wait a third time');
  exchange.drain();
  await waitFor(() => exchange.ended, 2000, 'the response to end');
  assert.equal(exchange.body, 'abc');
});

test('a client that goes away while the writer waits for it: the source is cancelled and never asked again', async () => {
  const exchange = new SlowExchange();
  const body = source([data('a'), data('b')]);
  writeLocalReply(exchange, { status: 200, body });
  await waitFor(() => exchange.waiting, 2000, 'the writer to wait for the client');
  exchange.close();
  await waitFor(() => body.cancelled > 0, 2000, 'the source to be cancelled');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(body.asked, 1);
  assert.equal(exchange.ended, false);
});

test('a source that breaks: the response is aborted (never completed) and the reason noted', async () => {
  const exchange = new RecordingExchange();
  const notes: string[] = [];
  const body = source([data('partial'), { kind: 'error', details: 'the processor went away' }]);
  writeLocalReply(exchange, { status: 200, body }, { note: (n) => notes.push(n) });
  await waitFor(() => exchange.aborted, 2000, 'the response to be aborted');
  assert.equal(exchange.complete, false);
  assert.equal(exchange.body, 'partial');
  assert.deepEqual(notes, ['streamed reply broke: the processor went away']);
  assert.equal(body.cancelled, 1);
});

test('a source that throws is a broken source too', async () => {
  const exchange = new RecordingExchange();
  const notes: string[] = [];
  const body: StreamedBody = { kind: 'streamed', next: () => Promise.reject(new Error('boom')), cancel: () => undefined };
  writeLocalReply(exchange, { status: 200, body }, { note: (n) => notes.push(n) });
  await waitFor(() => exchange.aborted, 2000, 'the response to be aborted');
  assert.deepEqual(notes, ['streamed reply broke: boom']);
});

test('a HEAD request, a 204 or a 304: the head ends the response, the source is never read', () => {
  for (const [status, headRequest] of [[200, true], [204, false], [304, false]] as const) {
    const exchange = new RecordingExchange();
    const body = source([data('never')]);
    writeLocalReply(exchange, { status, body }, { headRequest });
    assert.equal(exchange.head?.status, status);
    assert.equal(exchange.ended, true);
    assert.equal(exchange.body, '');
    assert.equal(body.asked, 0);
    assert.equal(body.cancelled, 1);
  }
});

test('a reply that is not written (a response already started) or whose head is refused cancels its source', () => {
  const started = new RecordingExchange();
  started.startResponse(200, []);
  const unwritten = source([]);
  assert.deepEqual(writeLocalReply(started, { status: 200, body: unwritten }), { kind: 'not-written' });
  assert.equal(unwritten.cancelled, 1);

  const refusing = new (class extends RecordingExchange {
    #first = true;
    override startResponse(status: number, headers: readonly string[]): void {
      if (this.#first) {
        this.#first = false;
        throw new TypeError('Invalid character in header content ["x-bad"]');
      }
      super.startResponse(status, headers);
    }
  })();
  const refused = source([]);
  const written = writeLocalReply(refusing, { status: 200, headers: { 'x-bad': 'a\nb' }, body: refused });
  assert.equal(written.kind === 'written' && written.invalid !== undefined, true);
  assert.equal(refusing.head?.status, 500);
  assert.equal(refused.cancelled, 1);
});
