import { test } from 'node:test';
import assert from 'node:assert/strict';
import { takePort } from '../lib/testing/taken-port.js';
import { startExtprocInProcess } from './testing/in-process.js';

test('a taken gRPC or admin port stops extproc with one line naming the port and the setting that moves it', async () => {
  const taken = await takePort();
  try {
    await assert.rejects(startExtprocInProcess(['--listen', taken.address, '--admin', '127.0.0.1:0']), {
      name: 'ListenError',
      message: `extproc: ${taken.address} is already in use (set EXTPROC_LISTEN or --listen)`,
    });
    await assert.rejects(startExtprocInProcess(['--listen', '127.0.0.1:0', '--admin', taken.address]), {
      message: `extproc: ${taken.address} is already in use (set EXTPROC_ADMIN or --admin)`,
    });
  } finally {
    await taken.release();
  }
});
