import { test } from 'node:test';
import assert from 'node:assert/strict';
import { takePort } from '../lib/testing/taken-port.js';
import { startTestProxy } from './testing/proxy.js';

test('a taken ingress or CONNECT port stops the proxy with one line naming the port and the setting that moves it', async () => {
  const taken = await takePort();
  try {
    for (const [flag, env] of [['--listen', 'PROXY_LISTEN'], ['--connect-listen', 'PROXY_CONNECT_LISTEN']] as const) {
      await assert.rejects(startTestProxy({ mode: 'in-process', extproc: '127.0.0.1:1', args: [flag, taken.address] }), {
        name: 'ListenError',
        message: `proxy: ${taken.address} is already in use (set ${env} or ${flag})`,
      });
    }
  } finally {
    await taken.release();
  }
});
