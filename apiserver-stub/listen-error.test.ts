import { test } from 'node:test';
import assert from 'node:assert/strict';
import { takePort } from '../lib/testing/taken-port.js';
import { startStubInProcess } from './testing/in-process.js';

test('a taken gRPC, attach or admin port stops the stub with one line naming the port and the setting that moves it', async () => {
  const taken = await takePort();
  const free = ['--workers', '0', '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0'];
  try {
    for (const [flag, env] of [['--listen', 'APISERVER_LISTEN'], ['--attach-listen', 'APISERVER_ATTACH_LISTEN'], ['--admin', 'APISERVER_ADMIN']] as const) {
      await assert.rejects(startStubInProcess([...free, flag, taken.address]), {
        name: 'ListenError',
        message: `apiserver-stub: ${taken.address} is already in use (set ${env} or ${flag})`,
      });
    }
  } finally {
    await taken.release();
  }
});
