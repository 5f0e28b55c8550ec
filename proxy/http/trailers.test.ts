import { test } from 'node:test';
import assert from 'node:assert/strict';
import { declaredTrailer, relayTrailers, trailerObject } from './trailers.js';

const raw = (...kv: string[]): Buffer[] => kv.map((s) => Buffer.from(s, 'latin1'));

test('the Trailer declaration is read in any case and joined', () => {
  assert.equal(declaredTrailer(raw('TRAILER', 'a', 'content-type', 'x', 'trailer', 'b')), 'a, b');
  assert.equal(declaredTrailer(raw('content-type', 'x')), undefined);
});

test('framing, routing and hop-by-hop fields and the stale signal are not relayed as trailers', () => {
  assert.deepEqual(
    relayTrailers(raw('X-Checksum', 'abc', 'Content-Length', '3', 'host', 'h', 'connection', 'close', 'x-ate-assignment-stale', 'true', 'grpc-status', '0', 'HTTP2-Settings', 'AAMA', ':status', '200')),
    [['X-Checksum', 'abc'], ['grpc-status', '0']],
  );
});

test('trailers as an HTTP/2 header object: names lower case, repeated fields joined', () => {
  assert.deepEqual(trailerObject([['Grpc-Status', '0'], ['x-a', '1'], ['X-A', '2']]), { 'grpc-status': '0', 'x-a': '1, 2' });
});
