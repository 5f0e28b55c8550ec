import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Socket } from 'node:net';
import { canCarryTrailers, declaredTrailer, relayTrailers } from './trailers.js';

const raw = (...kv: string[]): Buffer[] => kv.map((s) => Buffer.from(s, 'latin1'));

function response(httpVersion: '1.0' | '1.1'): http.ServerResponse {
  const req = new http.IncomingMessage(new Socket());
  req.httpVersionMajor = 1;
  req.httpVersionMinor = httpVersion === '1.0' ? 0 : 1;
  req.httpVersion = httpVersion;
  const res = new http.ServerResponse(req);
  if (httpVersion === '1.0') res.useChunkedEncodingByDefault = false;
  return res;
}

test('the Trailer declaration is read in any case and joined', () => {
  assert.equal(declaredTrailer(raw('TRAILER', 'a', 'content-type', 'x', 'trailer', 'b')), 'a, b');
  assert.equal(declaredTrailer(raw('content-type', 'x')), undefined);
});

test('only a chunked response can carry trailers', () => {
  const res = response('1.1');
  assert.equal(canCarryTrailers(res, 'GET', 200, ['Content-Type', 'x']), true);
  assert.equal(canCarryTrailers(res, 'GET', 200, ['Content-Length', '5']), false);
  assert.equal(canCarryTrailers(res, 'HEAD', 200, []), false);
  assert.equal(canCarryTrailers(res, 'GET', 204, []), false);
  assert.equal(canCarryTrailers(res, 'GET', 304, []), false);
  assert.equal(canCarryTrailers(response('1.0'), 'GET', 200, []), false);
});

test('framing, routing and hop-by-hop fields and the stale signal are not relayed as trailers', () => {
  assert.deepEqual(
    relayTrailers(raw('X-Checksum', 'abc', 'Content-Length', '3', 'host', 'h', 'connection', 'close', 'x-ate-assignment-stale', 'true', 'grpc-status', '0')),
    [['X-Checksum', 'abc'], ['grpc-status', '0']],
  );
});
