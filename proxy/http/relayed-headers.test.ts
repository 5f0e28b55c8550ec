import { test } from 'node:test';
import assert from 'node:assert/strict';
import { relayHeaders } from './relayed-headers.js';
import { ResponseOutcome } from '../upstream/outcome.js';

const raw = (...kv: string[]): Buffer[] => kv.map((s) => Buffer.from(s, 'latin1'));

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

test('an upstream Connection header cannot remove content-length; every RFC 9110 hop-by-hop header goes', () => {
  const out = relayHeaders(
    raw('Content-Length', '2', 'Connection', 'Content-Length, close, X-A', 'X-A', '1', 'Proxy-Connection', 'x', 'TE', 'trailers', 'Upgrade', 'h2c', 'Trailer', 'x-t'),
  );
  assert.deepEqual(out, ['Content-Length', '2']);
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

test('repeated Connection fields are one list: the headers each one names go (fuzz seed 2: Connection: x-hop, then Connection: close)', () => {
  assert.deepEqual(relayHeaders(raw('Connection', 'x-worker-hop', 'X-Worker-Hop', 'secret', 'connection', 'close', 'Content-Length', '0')), ['Content-Length', '0']);
  assert.deepEqual(relayHeaders(raw('Connection', 'close', 'X-A', '1', 'Connection', 'x-a', 'X-B', '2')), ['X-B', '2']);
});
