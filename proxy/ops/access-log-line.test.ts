import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accessLine, type FinishedRequest } from './access-log-line.js';

function request(over: Partial<FinishedRequest> = {}): FinishedRequest {
  return {
    requestId: 'r-1',
    trace: undefined,
    remoteAddress: '127.0.0.1',
    method: 'GET',
    authority: 'actor-000.actors.test',
    path: '/x',
    protocol: 'http/1.1',
    body: null,
    bytesOut: 12,
    upstreamAddress: '127.0.0.5:8080',
    upstreamMs: 1.23456,
    attempt: 1,
    route: { source: 'resolver' },
    headers: { get: (name) => (name === 'user-agent' ? 'ua/1' : undefined) },
    exchange: {
      encrypted: true,
      connectionInfo: { remoteAddress: '127.0.0.1', remotePort: 1, localAddress: undefined, localPort: undefined, encrypted: true, httpVersion: '1.1', id: 1, serverName: 'sni.test', tlsVersion: 'TLSv1.3' },
    },
    upgrade: undefined,
    tunnel: undefined,
    error: undefined,
    details: undefined,
    ...over,
  };
}

test('every field is present, in the documented order, with the values of the finished request', () => {
  const line = accessLine(request(), { status: 200, truncated: false, durationMs: 2.00049 }, []);
  assert.deepEqual(Object.keys(line), [
    'msg', 'time', 'pid', 'requestId', 'traceId', 'client', 'method', 'authority', 'path', 'protocol', 'status', 'durationMs',
    'bytesIn', 'bytesOut', 'upstream', 'upstreamMs', 'attempts', 'routeSource', 'cache', 'extprocMs', 'userAgent', 'tls',
    'upgrade', 'tunnel', 'error', 'details', 'aborted',
  ]);
  assert.equal(line.msg, 'access');
  assert.equal(line.durationMs, 2);
  assert.equal(line.upstreamMs, 1.235);
  assert.equal(line.attempts, 2);
  assert.equal(line.bytesIn, 0);
  assert.equal(line.userAgent, 'ua/1');
  assert.deepEqual(line.tls, { version: 'TLSv1.3', sni: 'sni.test' });
  assert.equal(line.tunnel, null);
  assert.equal(line.aborted, false);
});

test('stage fields fill in their own keys without moving them; a stage with nothing to add leaves them null', () => {
  const line = accessLine(request(), { status: 200, truncated: true, durationMs: 1 }, [() => ({ cache: 'hit' }), () => undefined]);
  assert.equal(line.cache, 'hit');
  assert.equal(line.extprocMs, null);
  assert.equal(Object.keys(line).indexOf('cache'), 18);
  assert.equal(line.aborted, true);
});

test('a tunnel reports its kind, bytes and who closed it', () => {
  const tunnel = { kind: 'connect' as const, openedAt: 0, reason: 'client', bytes: () => ({ fromClient: 3, toClient: 4 }) };
  const line = accessLine(request({ tunnel, exchange: { ...request().exchange, encrypted: false } }), { status: 200, truncated: false, durationMs: 1 }, []);
  const fields = line.tunnel as Record<string, unknown>;
  assert.equal(fields.kind, 'connect');
  assert.equal(fields.bytesFromClient, 3);
  assert.equal(fields.bytesToClient, 4);
  assert.equal(fields.closedBy, 'client');
  assert.equal(line.tls, null);
});
