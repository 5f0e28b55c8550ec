import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyFailure, isStaleRejection, relayHeaders, ResponseOutcome } from './outcome.js';

const raw = (...kv: string[]): Buffer[] => kv.map((s) => Buffer.from(s, 'latin1'));

test('a stale rejection is 421 with x-ate-assignment-stale: true, value case-insensitive', () => {
  assert.equal(isStaleRejection(421, raw('X-Ate-Assignment-Stale', 'true')), true);
  assert.equal(isStaleRejection(421, raw('x-ate-assignment-stale', ' TRUE ')), true);
  assert.equal(isStaleRejection(421, raw('x-ate-assignment-stale', 'false')), false);
  assert.equal(isStaleRejection(421, raw('content-type', 'text/plain')), false, 'a bare 421 is the actor answering');
  assert.equal(isStaleRejection(200, raw('x-ate-assignment-stale', 'true')), false);
});

test('relayed headers lose hop-by-hop headers, those named by Connection, and the stale signal', () => {
  const out = relayHeaders(
    raw('Content-Type', 'text/plain', 'Connection', 'x-secret', 'X-Secret', '1', 'Keep-Alive', 'timeout=5', 'Transfer-Encoding', 'chunked',
      'X-Ate-Assignment-Stale', 'true', 'Set-Cookie', 'a=1', 'set-cookie', 'b=2', 'X-Utf8', 'caf\xe9'),
  );
  assert.deepEqual(out, ['Content-Type', 'text/plain', 'Set-Cookie', 'a=1', 'set-cookie', 'b=2', 'X-Utf8', 'caf\xe9']);
  const o = new ResponseOutcome(200, out);
  assert.deepEqual(o.headers['set-cookie'], ['a=1', 'b=2']);
  assert.equal(o.headers['content-type'], 'text/plain');
});

test('failures before the request was written are connect failures; after, resets; a headers timeout is a timeout', () => {
  assert.deepEqual(classifyFailure(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), false), { kind: 'connect-failed', code: 'ECONNREFUSED' });
  assert.deepEqual(classifyFailure(Object.assign(new Error('x'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), false), { kind: 'connect-failed', code: 'UND_ERR_CONNECT_TIMEOUT' });
  assert.deepEqual(classifyFailure(Object.assign(new Error('x'), { code: 'UND_ERR_SOCKET' }), true), { kind: 'reset', requestWritten: true, code: 'UND_ERR_SOCKET' });
  assert.deepEqual(classifyFailure(Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), true), { kind: 'timeout' });
});
