/**
 * The response writer's body pump and the upstream request behind it: once the client's response is over, an
 * upstream body still flowing is aborted rather than left paused for a drain that never comes (an HTTP/2 client's
 * stream ended by a 205's head left the worker's request open for good, and the pool's close, so the drain, waited
 * for it forever: found by the worker-answers property, FUZZ_SEED=1569029259 FUZZ_PATH=1168).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseWriter } from './response-writer.js';
import { UpstreamResponse, type BodySink, type UpstreamBody } from '../upstream/response.js';
import type { UpstreamFailure } from '../upstream/outcome.js';
import { RecordingExchange } from '../testing/recording-exchange.js';
import { testRequest } from '../testing/proxy-request.js';

/** A body that hands out one chunk, then waits to be resumed (as undici's does under backpressure). */
class HeldBody implements UpstreamBody {
  sink: BodySink | undefined;
  aborted: string | undefined;
  resumed = 0;
  pipe(sink: BodySink): void {
    this.sink = sink;
    sink.data(Buffer.from('first'));
  }
  resume(): void {
    this.resumed++;
  }
  abort(reason: string): void {
    this.aborted = reason;
  }
  failure(): UpstreamFailure | undefined {
    return undefined;
  }
}

/** An exchange that takes nothing more once written to: its `drain` never comes. */
class FullExchange extends RecordingExchange {
  override sendBody(chunk: Buffer): boolean {
    super.sendBody(chunk);
    return false;
  }
  override whenWritable(): void {}
}

test('a client response that is over while the upstream body waits for a drain aborts the upstream request', () => {
  const ctx = testRequest('GET', performance.now(), 'a.demo.example', new FullExchange());
  const body = new HeldBody();
  new ResponseWriter(undefined).relay(ctx, new UpstreamResponse(205, [], undefined, body, undefined), 205, []);
  assert.equal(body.aborted, undefined, 'still pumping while the client response is open');
  ctx.exchange.close();
  assert.match(body.aborted ?? '', /client response is over/);
});

test('an upstream body that ended is not aborted when the client response closes after it', () => {
  const ctx = testRequest();
  const body = new HeldBody();
  new ResponseWriter(undefined).relay(ctx, new UpstreamResponse(200, [], undefined, body, undefined), 200, []);
  body.sink?.end(null);
  ctx.exchange.close();
  assert.equal(body.aborted, undefined);
  assert.equal((ctx.exchange as RecordingExchange).ended, true);
});
