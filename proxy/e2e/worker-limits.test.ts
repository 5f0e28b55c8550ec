/**
 * End to end: request heads the proxy accepts reach the actor (the stub's workers accept every head the proxy
 * forwards; lib/http-limits.ts keeps the two limits together).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_HEADER_BYTES } from '../../lib/http-limits.js';
import { actorName, client, send, startExtproc, startStub, type Extproc, type Stub, STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type TestProxy } from '../testing/proxy.js';

let stub: Stub;
let extproc: Extproc;
let proxy: TestProxy;

before(async () => {
  stub = await startStub({ workers: 2, capacity: 4, actors: 4 });
  extproc = await startExtproc(stub);
  proxy = await startTestProxy({ extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--actor-cache', 'off'] });
});

after(async () => {
  await proxy?.component.stop();
  await extproc?.component.stop();
  await stub?.component.stop();
  await client.close();
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
