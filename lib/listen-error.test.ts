import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFree, listening, ListenError } from './listen-error.js';
import { takePort } from './testing/taken-port.js';

const setting = { env: 'X_LISTEN', flag: '--listen' };

test('a bind error becomes one line naming the component, the address and the setting; other errors pass', async () => {
  const inUse = Object.assign(new Error('listen EADDRINUSE: address already in use'), { code: 'EADDRINUSE' });
  await assert.rejects(listening('x', '127.0.0.1', 9, setting, () => Promise.reject(inUse)), (err: unknown) => {
    assert.ok(err instanceof ListenError);
    assert.equal(err.message, 'x: 127.0.0.1:9 is already in use (set X_LISTEN or --listen)');
    return true;
  });
  // grpc-js puts the code only in its message.
  const grpc = new Error('No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use 127.0.0.1:9]');
  await assert.rejects(listening('x', '127.0.0.1', 9, setting, () => Promise.reject(grpc)), /^ListenError: x: 127\.0\.0\.1:9 is already in use/);
  await assert.rejects(listening('x', '::1', 9, setting, () => Promise.reject(Object.assign(new Error('x'), { code: 'EACCES' }))), /x: \[::1\]:9 is not permitted/);
  const other = new Error('something else');
  await assert.rejects(listening('x', '127.0.0.1', 9, setting, () => Promise.reject(other)), (err) => err === other);
});

test('assertFree: a taken port is a ListenError, a free one (and port 0) passes', async () => {
  const taken = await takePort();
  try {
    await assert.rejects(assertFree('x', '127.0.0.1', taken.port, setting), { message: `x: ${taken.address} is already in use (set X_LISTEN or --listen)` });
    await assertFree('x', '127.0.0.1', 0, setting);
  } finally {
    await taken.release();
  }
  await assertFree('x', '127.0.0.1', taken.port, setting);
});
