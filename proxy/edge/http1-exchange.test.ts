import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Socket } from 'node:net';
import { Http1Exchange } from './http1-exchange.js';

function exchange(httpVersion: '1.0' | '1.1'): Http1Exchange {
  const req = new http.IncomingMessage(new Socket());
  req.httpVersionMajor = 1;
  req.httpVersionMinor = httpVersion === '1.0' ? 0 : 1;
  req.httpVersion = httpVersion;
  const res = new Http1Exchange(req);
  if (httpVersion === '1.0') res.useChunkedEncodingByDefault = false;
  return res;
}

test('only a chunked response can carry trailers', () => {
  const res = exchange('1.1');
  assert.equal(res.trailersAllowed('GET', 200, ['Content-Type', 'x']), true);
  assert.equal(res.trailersAllowed('GET', 200, ['Content-Length', '5']), false);
  assert.equal(res.trailersAllowed('HEAD', 200, []), false);
  assert.equal(res.trailersAllowed('GET', 204, []), false);
  assert.equal(res.trailersAllowed('GET', 304, []), false);
  assert.equal(exchange('1.0').trailersAllowed('GET', 200, []), false);
});

test('an HTTP/1.1 exchange is a plain request: no head before startResponse, no tunnel, no gRPC', () => {
  const res = exchange('1.1');
  assert.equal(res.kind, 'request');
  assert.equal(res.protocol, 'http/1.1');
  assert.equal(res.headSent, false);
  assert.equal(res.sentStatus, 0);
  assert.equal(res.carriesGrpc, false);
  assert.equal(res.refusesHead(), undefined);
  assert.equal(res.openTunnel(101, []), undefined);
  res.closeAfterResponse();
  assert.equal(res.shouldKeepAlive, false);
});
