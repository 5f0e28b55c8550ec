import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HOP_BY_HOP, namedByConnection, removeNamedByConnection } from './hop-by-hop.js';

test('the RFC 9110 hop-by-hop headers, and RFC 9113\'s connection-specific HTTP2-Settings', () => {
  assert.deepEqual([...HOP_BY_HOP].sort(), ['connection', 'http2-settings', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
});

test('Connection names headers case-insensitively; close, keep-alive, hop-by-hop names and kept names are not returned', () => {
  assert.equal(namedByConnection('keep-alive', new Set()), undefined);
  assert.equal(namedByConnection('Close', new Set()), undefined);
  assert.deepEqual(namedByConnection(' X-A , close, TE, Content-Length,,x-b', new Set(['content-length'])), new Set(['x-a', 'x-b']));
});

test('removes every value of the named headers, whatever the case of their names', () => {
  const list = ['X-A', '1', 'x-keep', 'k', 'x-a', '2', 'X-B', '3'];
  removeNamedByConnection(list, 'x-a, X-B', new Set());
  assert.deepEqual(list, ['x-keep', 'k']);
});
