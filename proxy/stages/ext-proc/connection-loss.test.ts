import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isConnectionLoss } from './connection-loss.js';

test('a connection loss is an HTTP/2 INTERNAL_ERROR reset without a gRPC status; anything the processor said is not', () => {
  const rows: [string, string, boolean][] = [
    // grpc-js's details, verbatim: the connection closed by a GOAWAY with an error code (the processor's reset-rate guard).
    ['INTERNAL', 'Received RST_STREAM with code 2 triggered by internal client error: Session closed with error code 2', true],
    ['INTERNAL', 'Received RST_STREAM with code 2 (Internal server error)', true],
    ['INTERNAL', 'boom', false],
    ['INTERNAL', 'Received RST_STREAM with code 0 (Call ended without gRPC status)', false],
    ['INTERNAL', 'Received RST_STREAM with code 1', false],
    ['INTERNAL', 'Received RST_STREAM with code 21', false],
    ['UNKNOWN', 'Received RST_STREAM with code 2 (Internal server error)', false],
    ['RESOURCE_EXHAUSTED', 'Bandwidth exhausted or memory limit exceeded', false],
  ];
  for (const [code, details, want] of rows) assert.equal(isConnectionLoss(code, details), want, `${code} ${details}`);
});
