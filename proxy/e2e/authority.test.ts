/**
 * End to end (stub, extproc and proxy in the test's process): one authority per request. A filter cannot
 * rewrite Host — the cache, ext_proc and the worker all key on the authority the ingress decided — so a
 * filter that tries fails its own request (500 PROXY_ERR_FILTER_FAILED), the request goes nowhere, and
 * the actor's binding is not evicted.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { actorName, adminJson, client, hostOf, proxyStats, send, startStack, stubStats, type Stack, type Stub } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { fixture } from '../testing/helpers.js';

let stack: Stack;
let stub: Stub;
let proxy: InProcessTestProxy;

describe('one authority per request', () => {
  before(async () => {
    stack = await startStack({ stub: { workers: 4, actors: 10, capacity: 8 }, proxyArgs: ['--cache-ttl-ms', '600000', '--filter', fixture('set-host')] });
    ({ stub, proxy } = stack);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await stack?.stop();
  });

  test('a filter that rewrites Host fails its request; nothing is sent, nothing is evicted', async () => {
    const [a, b] = [actorName(1), actorName(2)];
    assert.equal((await send(proxy, a)).status, 200, 'the binding of a is learned');
    assert.equal((await send(proxy, b)).status, 200, 'and the one of b');
    const deliveredBefore = (await stubStats(stub)).deliveries.total;
    const before = await proxyStats(proxy);
    const r = await send(proxy, a, { headers: { 'x-set-host': hostOf(b) } });
    assert.equal(r.status, 500);
    assert.equal(r.text, 'internal error in a request filter\n');
    const after = await proxyStats(proxy);
    assert.equal((await stubStats(stub)).deliveries.total, deliveredBefore, 'no worker got the request');
    assert.deepEqual(after.cache.evictions, before.cache.evictions, 'no binding evicted');
    assert.equal(after.extproc.streams, before.extproc.streams, 'no ext_proc stream for it');
    const dump = await adminJson<{ bindings: { key: string }[] }>(proxy.admin, '/cache');
    assert.ok(dump.bindings.some((x) => x.key === `demo/${a}`), 'a keeps its binding');
    assert.equal((await send(proxy, a)).status, 200, 'and is served from it');
  });
});
