import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { decideUpgrade, upgradeToken } from './upgrade-request.js';
import { refuseConnectTarget } from './connect-listener.js';
import { ERRORS } from '../http/errors.js';
import { actorHost, SUFFIX } from '../../lib/testing/actors.js';

const req = (method: string, headers: Record<string, string>): IncomingMessage => ({ method, headers }) as unknown as IncomingMessage;
const allowed = new Set(['websocket', 'foo']);

test('upgrade tokens: first protocol, lower case, no version', () => {
  assert.equal(upgradeToken('WebSocket'), 'websocket');
  assert.equal(upgradeToken('foo/2, websocket'), 'foo');
  assert.equal(upgradeToken(undefined), '');
});

test('websocket on a GET and allowed tokens are forwarded; h2c is served plain; the rest is refused', () => {
  assert.deepEqual(decideUpgrade(req('GET', { upgrade: 'websocket' }), allowed), { kind: 'forward', token: 'websocket' });
  assert.deepEqual(decideUpgrade(req('POST', { upgrade: 'foo', 'content-length': '0' }), allowed), { kind: 'forward', token: 'foo' });
  assert.deepEqual(decideUpgrade(req('GET', { upgrade: 'h2c' }), allowed), { kind: 'plain' });
  assert.equal(decideUpgrade(req('GET', { upgrade: 'bar' }), allowed).kind, 'refuse');
  assert.equal(decideUpgrade(req('POST', { upgrade: 'websocket' }), allowed).kind, 'refuse');
  assert.equal(decideUpgrade(req('GET', { upgrade: 'websocket', 'content-length': '5' }), allowed).kind, 'refuse');
  assert.equal(decideUpgrade(req('GET', { upgrade: 'h2c', 'transfer-encoding': 'chunked' }), allowed).kind, 'refuse');
});

test('CONNECT targets: an actor host with a port passes; no port → 400; not an actor → 404', () => {
  assert.equal(refuseConnectTarget(actorHost('a1', 'demo', 80), SUFFIX), undefined);
  assert.equal(refuseConnectTarget(actorHost('a1'), SUFFIX)?.spec, ERRORS.CONNECT_NO_PORT);
  assert.equal(refuseConnectTarget(`${actorHost('a1')}:0`, SUFFIX)?.spec, ERRORS.CONNECT_NO_PORT);
  assert.equal(refuseConnectTarget('example.com:443', SUFFIX)?.spec, ERRORS.CONNECT_NOT_ACTOR);
  assert.equal(refuseConnectTarget('[::1]:443', SUFFIX)?.spec, ERRORS.CONNECT_NOT_ACTOR);
});
