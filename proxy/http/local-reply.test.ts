/**
 * The status a local reply is written with: a final status as given, 1xx as 200 (as Envoy answers an ext_proc
 * immediate response), and anything that is no status at all as 500 — for every protocol alike (an ext_proc
 * immediate response with code 600 reached HTTP/1.1 clients as `600`, while HTTP/2 answered 500: found by the
 * ext_proc-answers property, FUZZ_SEED=2).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecordingExchange } from '../testing/recording-exchange.js';
import { localReplyHead, writeLocalReply } from './local-reply.js';

test('local reply statuses: 200-599 as given, 1xx as 200, anything else 500', () => {
  const cases: [number, number][] = [[200, 200], [204, 204], [418, 418], [599, 599], [100, 200], [199, 200], [600, 500], [999, 500], [1000, 500], [0, 500], [-1, 500], [99, 500]];
  for (const [given, written] of cases) assert.equal(localReplyHead({ status: given }).status, written, String(given));
});

test('a reply with status 600 is written as 500 on an exchange that would take any status', () => {
  const exchange = new RecordingExchange();
  writeLocalReply(exchange, { status: 600, body: 'denied' });
  assert.equal(exchange.sentStatus, 500);
});
