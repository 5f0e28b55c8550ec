/**
 * End to end: request heads the proxy accepts reach the actor (the stub's workers accept every head the proxy
 * forwards; lib/http-limits.ts keeps the two limits together).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_HEADER_BYTES } from '../../lib/http-limits.js';
import { actorName, client, send, startStack, type Stack } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';

let stack: Stack;
let proxy: InProcessTestProxy;

describe('request heads the proxy accepts reach the actor', () => {
  before(async () => {
    stack = await startStack({ stub: { workers: 2, capacity: 4, actors: 4 }, proxyArgs: ['--actor-cache', 'off'] });
    proxy = stack.proxy;
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await stack?.stop();
  });

  for (const kib of [20, 56]) {
    test(`a ${kib} KiB request header goes through the proxy to the actor`, async () => {
      const value = 'v'.repeat(kib * 1024);
      const a = await send(proxy, actorName(0), { headers: { 'x-large': value }, path: '/?echo_headers=1' });
      assert.equal(a.status, 200, a.text.slice(0, 200));
      assert.equal(a.app?.headers?.['x-large']?.length, value.length);
    });
  }

  test('a head over the ingress limit is refused at the ingress (431), before any worker', async () => {
    const a = await send(proxy, actorName(1), { headers: { 'x-large': 'v'.repeat(MAX_HEADER_BYTES) } });
    assert.equal(a.status, 431);
  });
});
