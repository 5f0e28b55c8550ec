import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallOutcome } from './grpc-calls.js';
import { durationOverlapOf, grpcUsage, overlapOf, roundOf, unarySample } from './grpc-usage.js';

/** A call started at `startMs` whose replies arrived from `firstReplyMs` until its status at `endMs`. */
const ok = (startMs: number, firstReplyMs: number, endMs: number): CallOutcome => ({ kind: 'ok', startMs, firstReplyMs, endMs, replies: 40 });
const failed = (startMs: number, endMs: number): CallOutcome => ({ kind: 'failed', startMs, firstReplyMs: null, endMs, code: 'UNAVAILABLE', detail: 'gone' });

test('a round: each call\'s duration and streaming time, the failures, and the time from the first start to the last status', () => {
  const r = roundOf([ok(100, 102, 300), ok(101, 110, 305), failed(102, 150)]);
  assert.deepEqual(r.callMs, [200, 204, 48]);
  assert.deepEqual(r.streamMs, [198, 195, 0]);
  assert.equal(r.errors, 1);
  assert.equal(r.wallMs, 205);
  assert.equal(r.callMsSum, 452);
  assert.equal(r.streamMsSum, 393);
  assert.deepEqual(roundOf([]), { callMs: [], streamMs: [], errors: 0, wallMs: 0, callMsSum: 0, streamMsSum: 0 });
});

// Ten calls of 200 ms (the first reply 2 ms after the call reaches the worker), all started at 0.
const together = roundOf(Array.from({ length: 10 }, () => ok(0, 2, 202)));
// The same ten served one at a time: the i-th reaches the worker when the one before it ended.
const inTurn = roundOf(Array.from({ length: 10 }, (_, i) => ok(0, 202 * i + 2, 202 * (i + 1))));

test('the overlap ratio is about K when K calls run together and about 1 when they are served one at a time', () => {
  assert.equal(overlapOf([together]), 2000 / 202);
  assert.equal(overlapOf([inTurn]), 2000 / 2020);
  // Over several rounds: summed streaming times over summed wall times, not a mean of ratios.
  assert.equal(overlapOf([together, inTurn]), 4000 / (202 + 2020));
  assert.equal(overlapOf([]), 0);
});

test('the client\'s durations include the wait: their ratio is (K + 1) / 2 when the calls are served one at a time', () => {
  assert.equal(durationOverlapOf([together]), 10);
  assert.equal(durationOverlapOf([inTurn]), (202 * 55) / 2020);
  assert.equal(durationOverlapOf([]), 0);
});

test('the usage: medians of one call alone and of the rounds, their ratio, the unary calls beside a stream', () => {
  const rounds = [roundOf([ok(0, 1, 220), ok(0, 1, 230)]), roundOf([ok(0, 1, 400), ok(0, 201, 410)]), roundOf([ok(0, 1, 240), ok(0, 1, 250)])];
  const u = grpcUsage({
    worker: '127.1.0.1',
    streamActor: 'a',
    unaryActor: 'b',
    concurrency: 2,
    repliesPerCall: 40,
    replyIntervalMs: 5,
    longStreamReplies: 200,
    alone: [ok(0, 1, 210), ok(0, 1, 200), ok(0, 1, 900)],
    rounds,
    unaryAlone: [ok(0, 3, 3), ok(0, 5, 5), ok(0, 4, 4)],
    unaryWhileStreaming: [unarySample(ok(0, 6, 6), true), unarySample(failed(0, 1000), false)],
  });
  assert.equal(u.aloneP50Ms, 210);
  assert.equal(u.wallP50Ms, 250);
  assert.equal(u.wallPerCall, 250 / 210);
  assert.equal(u.overlap, (448 + 608 + 488) / (230 + 410 + 250));
  assert.equal(u.durationOverlap, (450 + 810 + 490) / (230 + 410 + 250));
  assert.equal(u.unaryAloneP50Ms, 4);
  assert.deepEqual(u.unaryWhileStreaming, [{ latencyMs: 6, ok: true, streamOpen: true }, { latencyMs: 1000, ok: false, streamOpen: false }]);
  assert.equal(u.unaryWhileStreamingP50Ms, 6);
  assert.equal(u.unaryWhileStreamingMaxMs, 1000);
});
