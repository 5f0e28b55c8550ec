import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CANCELLED, classifyFailure, isStaleRejection, ResponseOutcome, STALE, TIMEOUT } from './outcome.js';

const raw = (...kv: string[]): Buffer[] => kv.map((s) => Buffer.from(s, 'latin1'));

test('a stale rejection is 421 with x-ate-assignment-stale: true, value case-insensitive', () => {
  assert.equal(isStaleRejection(421, raw('X-Ate-Assignment-Stale', 'true')), true);
  assert.equal(isStaleRejection(421, raw('x-ate-assignment-stale', ' TRUE ')), true);
  assert.equal(isStaleRejection(421, raw('x-ate-assignment-stale', 'false')), false);
  assert.equal(isStaleRejection(421, raw('content-type', 'text/plain')), false, 'a bare 421 is the actor answering');
  assert.equal(isStaleRejection(200, raw('x-ate-assignment-stale', 'true')), false);
});

test('the response outcome exposes relayed headers as an object, repeated names as arrays', () => {
  const o = new ResponseOutcome(200, ['Content-Type', 'text/plain', 'Set-Cookie', 'a=1', 'set-cookie', 'b=2']);
  assert.deepEqual(o.headers['set-cookie'], ['a=1', 'b=2']);
  assert.equal(o.headers['content-type'], 'text/plain');
});

test('failures before the request was started are connect failures; after, resets; a headers timeout is a timeout', () => {
  const err = (code: string): Error => Object.assign(new Error('x'), { code });
  assert.deepEqual(classifyFailure(err('ECONNREFUSED'), false, false), { kind: 'connect-failed', code: 'ECONNREFUSED' });
  assert.deepEqual(classifyFailure(err('UND_ERR_CONNECT_TIMEOUT'), false, false), { kind: 'connect-failed', code: 'UND_ERR_CONNECT_TIMEOUT' });
  assert.deepEqual(classifyFailure(err('UND_ERR_SOCKET'), true, true), { kind: 'reset', requestWritten: true, code: 'UND_ERR_SOCKET' });
  assert.deepEqual(classifyFailure(err('UND_ERR_HEADERS_TIMEOUT'), true, true), { kind: 'timeout' });
});

test('a reset says whether the whole request had been written', () => {
  assert.deepEqual(classifyFailure(Object.assign(new Error('x'), { code: 'UND_ERR_SOCKET' }), true, false), { kind: 'reset', requestWritten: false, code: 'UND_ERR_SOCKET' });
});

test('a request undici refuses to build is a local invalid-request, never a connect failure', () => {
  const err = (code: string): Error => Object.assign(new Error('x'), { code });
  assert.deepEqual(classifyFailure(err('UND_ERR_INVALID_ARG'), false, false), { kind: 'invalid-request', code: 'UND_ERR_INVALID_ARG' });
  assert.deepEqual(classifyFailure(err('UND_ERR_NOT_SUPPORTED'), false, false), { kind: 'invalid-request', code: 'UND_ERR_NOT_SUPPORTED' });
});

test('only the exact stale header name counts, wherever it stands among the headers', () => {
  assert.equal(isStaleRejection(421, raw('x-other', 'true')), false, 'another header saying true');
  assert.equal(isStaleRejection(421, raw('x-ate-assignment-stalf', 'true')), false, 'a name of the same length');
  assert.equal(isStaleRejection(421, raw('x-ate-assignment-stale-x', 'true')), false, 'a longer name');
  assert.equal(isStaleRejection(421, raw('x-other', 'true', 'content-type', 'text/plain', 'X-ATE-ASSIGNMENT-STALE', 'True')), true);
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
  assert.deepEqual(classifyFailure(null, false, false), { kind: 'connect-failed', code: 'UNKNOWN' });
  assert.deepEqual(classifyFailure({ code: 42 }, true, true), { kind: 'reset', requestWritten: true, code: 'UNKNOWN' });
  assert.deepEqual(classifyFailure(new Error('no code'), false, false), { kind: 'connect-failed', code: 'UNKNOWN' });
});
