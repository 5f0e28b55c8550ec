/** The wire contract spelled out literally, as Envoy, the ingress it replaces and the workers spell it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import * as wire from './wire-contract.js';

test('header names, metadata namespace and keys, proto and service names, defaults', () => {
  assert.equal(wire.TARGET_PORT_HEADER, 'x-ate-target-port');
  assert.equal(wire.TARGET_ACTOR_HEADER, 'ate-target-actor');
  assert.equal(wire.STALE_HEADER, 'x-ate-assignment-stale');
  assert.equal(wire.STALE_HEADER_VALUE, 'true');
  assert.equal(wire.STALE_STATUS, 421);
  assert.deepEqual(
    [...wire.INTERNAL_HEADERS].sort(),
    ['ate-endpoint-cached', 'ate-target-actor', 'x-ate-assignment-stale', 'x-ate-original-dst', 'x-ate-original-host', 'x-ate-target-port', 'x-envoy-original-dst-host'],
  );
  assert.ok(Object.isFrozen(wire.INTERNAL_HEADERS));
  assert.equal(wire.ORIGINAL_DST_NAMESPACE, 'envoy.filters.listener.original_dst');
  assert.equal(wire.ORIGINAL_DST_LOCAL_KEY, 'local');
  assert.equal(wire.ORIGINAL_DST_PORT_KEY, 'port');
  assert.equal(wire.EXT_PROC_SERVICE, 'envoy.service.ext_proc.v3.ExternalProcessor');
  assert.equal(wire.CONTROL_SERVICE, 'ateapi.Control');
  assert.equal(wire.DEFAULT_RESUME_BUDGET_MS, 15_000);
});

test('gRPC code names as in the gRPC spec', () => {
  assert.equal(wire.grpcCodeName(status.OK), 'OK');
  assert.equal(wire.grpcCodeName(status.NOT_FOUND), 'NOT_FOUND');
  assert.equal(wire.grpcCodeName(status.RESOURCE_EXHAUSTED), 'RESOURCE_EXHAUSTED');
  assert.equal(wire.grpcCodeName(99), 'CODE_99');
});
