import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CANCELLED, classifyFailure, isStaleRejection, relayHeaders, ResponseOutcome, STALE, TIMEOUT } from './outcome.js';

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

test('only the exact stale header name counts, wherever it stands among the headers', () => {
  assert.equal(isStaleRejection(421, raw('x-other', 'true')), false, 'another header saying true');
  assert.equal(isStaleRejection(421, raw('x-ate-assignment-stalf', 'true')), false, 'a name of the same length');
  assert.equal(isStaleRejection(421, raw('x-ate-assignment-stale-x', 'true')), false, 'a longer name');
  assert.equal(isStaleRejection(421, raw('x-other', 'true', 'content-type', 'text/plain', 'X-ATE-ASSIGNMENT-STALE', 'True')), true);
});

test('every hop-by-hop response header is dropped, also without a Connection header', () => {
  const out = relayHeaders(
    raw('Proxy-Connection', 'keep-alive', 'Keep-Alive', 'timeout=5', 'Transfer-Encoding', 'chunked', 'Upgrade', 'h2c', 'TE', 'trailers',
      'Trailer', 'x-t', 'Content-Length', '3'),
  );
  assert.deepEqual(out, ['Content-Length', '3']);
});

test('Connection lists are trimmed; every header it names goes, even repeated; its options and Content-Length stay', () => {
  const out = relayHeaders(raw('Connection', 'close,  x-a ,keep-alive', 'X-A', '1', 'x-a', '2', 'Close', 'not an option', 'X-B', '3'));
  assert.deepEqual(out, ['Close', 'not an option', 'X-B', '3']);
  assert.deepEqual(relayHeaders(raw('Connection', 'content-length, x-a', 'Content-Length', '3', 'X-A', '1')), ['Content-Length', '3']);
  assert.deepEqual(relayHeaders(raw('Connection', 'keep-alive', 'Keep-Alive', 'timeout=5', 'X-B', '3')), ['X-B', '3']);
});

test('response headers are built once, repeated names become a list in order', () => {
  const o = new ResponseOutcome(200, ['Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'SET-COOKIE', 'c=3']);
  assert.deepEqual(o.headers['set-cookie'], ['a=1', 'b=2', 'c=3']);
  assert.equal(o.headers, o.headers, 'the object is built on first use and kept');
  assert.equal(o.kind, 'response');
  assert.equal(o.status, 200);
});

test('the fixed outcomes, and failures without a usable error code', () => {
  assert.deepEqual({ ...STALE }, { kind: 'stale', status: 421 });
  assert.deepEqual({ ...CANCELLED }, { kind: 'cancelled' });
  assert.deepEqual({ ...TIMEOUT }, { kind: 'timeout' });
  assert.deepEqual(classifyFailure(null, false), { kind: 'connect-failed', code: 'UNKNOWN' });
  assert.deepEqual(classifyFailure({ code: 42 }, true), { kind: 'reset', requestWritten: true, code: 'UNKNOWN' });
  assert.deepEqual(classifyFailure(new Error('no code'), false), { kind: 'connect-failed', code: 'UNKNOWN' });
});
