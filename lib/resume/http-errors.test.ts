import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { httpErrorFor, invalidHostError } from './http-errors.js';

const KEY = 'team-a/counter-7';
const grpcError = (code: grpc.status, details: string) => httpErrorFor({ kind: 'grpc-error', code, details, budgetExhausted: false }, KEY);

test('gRPC codes map to the ingress table', () => {
  const rows: [grpc.status, string, number, string][] = [
    [grpc.status.NOT_FOUND, 'no such actor', 404, 'actor team-a/counter-7 not found'],
    [grpc.status.FAILED_PRECONDITION, 'actor is deleting', 503, 'actor team-a/counter-7 unavailable: actor is deleting'],
    [grpc.status.ABORTED, 'another operation is in progress for this actor', 503, 'actor team-a/counter-7 unavailable: another operation is in progress for this actor'],
    [grpc.status.UNAVAILABLE, 'connect ECONNREFUSED 10.1.1.1:50052', 503, 'actor team-a/counter-7 unavailable'],
    [grpc.status.DEADLINE_EXCEEDED, 'deadline', 504, 'actor team-a/counter-7 request timed out'],
    [grpc.status.PERMISSION_DENIED, 'denied by policy p-17', 403, 'actor team-a/counter-7 access denied'],
    [grpc.status.UNAUTHENTICATED, 'token expired', 401, 'actor team-a/counter-7 authentication required'],
    [grpc.status.RESOURCE_EXHAUSTED, 'no free workers available', 503, 'actor team-a/counter-7 unavailable: no free workers available'],
    [grpc.status.INTERNAL, 'pq: password authentication failed for user "ate"', 500, 'error resuming actor team-a/counter-7'],
    [grpc.status.UNKNOWN, 'panic: nil map', 500, 'error resuming actor team-a/counter-7'],
    [grpc.status.CANCELLED, 'x', 500, 'error resuming actor team-a/counter-7'],
  ];
  for (const [code, details, status, body] of rows) {
    const e = grpcError(code, details);
    assert.equal(e.status, status, grpc.status[code]);
    assert.equal(e.body, body, grpc.status[code]);
  }
});

test('non-gRPC failures', () => {
  assert.deepEqual(httpErrorFor({ kind: 'lot-full' }, KEY), { status: 503, body: 'actor "team-a/counter-7" unavailable: router at capacity', outcome: 'parking_full' });
  assert.deepEqual(httpErrorFor({ kind: 'cancelled' }, KEY), { status: 408, body: 'request for actor team-a/counter-7 cancelled by client', outcome: 'cancelled' });
  assert.deepEqual(httpErrorFor({ kind: 'timeout' }, KEY), { status: 504, body: 'actor team-a/counter-7 request timed out', outcome: 'timeout' });
  assert.deepEqual(httpErrorFor({ kind: 'unroutable', reason: 'bad-ip', status: 'STATUS_RUNNING' }, KEY), { status: 500, body: 'actor team-a/counter-7 routing failed', outcome: 'routing_failed' });
  assert.deepEqual(invalidHostError('a"b'), { status: 404, body: 'invalid host "a\\"b"', outcome: 'invalid_host' });
});
