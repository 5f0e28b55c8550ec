/**
 * End to end: a proxy process sets its V8 flags for itself before it serves (`lib/v8-tuning.ts`: allocation-site
 * pretenuring off) and reports them in `GET /server_info`; the test process, which set none, reports none.
 * Needs processes: V8 flags are per process, and the test checks that only the proxy's own process set them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestProxy } from '../testing/proxy.js';
import { appliedV8Flags, PROXY_V8_FLAGS } from '../../lib/v8-tuning.js';

test('a proxy process turns allocation-site pretenuring off and says so in /server_info', async () => {
  assert.deepEqual(PROXY_V8_FLAGS, ['--no-allocation-site-pretenuring']);
  const proxy = await startTestProxy({ extproc: '127.0.0.1:1', args: ['--access-log', 'off'] });
  try {
    const res = await fetch(`${proxy.admin}/server_info`);
    assert.equal(res.status, 200);
    const info = (await res.json()) as { component: string; v8Flags: unknown };
    assert.equal(info.component, 'proxy');
    assert.deepEqual(info.v8Flags, ['--no-allocation-site-pretenuring']);
  } finally {
    await proxy.stop();
  }
  assert.deepEqual(appliedV8Flags(), [], 'only the proxy process set them, not the process that started it');
});
