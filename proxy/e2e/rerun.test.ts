/**
 * End to end: a cached binding goes bad between two requests (the actor is suspended, moved, or its worker
 * stops) and the second request still gets 200 from the actor's new worker, through one eviction and one re-run
 * in the same client request; bodies are replayed intact and delivered exactly once; a late stale answer leaves
 * the newer binding alone; a body above the replay limit gets a clear error and is never delivered twice.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { accessLine, actorName, adminJson, client, extprocStats, hostOf, proxyStats, resetStats, resumeCalls, send, startStack, stubActor, stubStats, ATESPACE, type Extproc, type Stack, type Stub } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { startHeldPost } from '../testing/held-post.js';

let stack: Stack;
let stub: Stub;
let extproc: Extproc;
let proxy: InProcessTestProxy;
let small: InProcessTestProxy;
const REPLAY_LIMIT = 1024;

describe('re-runs after a cached binding goes bad', () => {
  before(async () => {
    stack = await startStack({ stub: { workers: 8, capacity: 4, actors: 20 }, proxyArgs: ['--cache-ttl-ms', '60000'] });
    ({ stub, extproc, proxy } = stack);
    small = await stack.addProxy(['--cache-ttl-ms', '60000', '--max-replay-body-bytes', String(REPLAY_LIMIT)]);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await stack?.stop();
  });

  const admin = (path: string): Promise<unknown> => adminJson(stub.admin, path, 'POST');

  async function warm(p: InProcessTestProxy, actor: string): Promise<string> {
    const a = await send(p, actor);
    assert.equal(a.status, 200);
    assert.equal(a.app?.actor, actor);
    return a.app?.worker as string;
  }

  for (const change of ['suspend', 'move'] as const) {
    test(`${change} between two requests: 200 from the actor's new worker after one eviction and one re-run`, async () => {
      const actor = actorName(change === 'suspend' ? 0 : 1);
      const oldWorker = await warm(proxy, actor);
      await admin(`/actors/${ATESPACE}/${actor}/${change}`);
      await resetStats(proxy.admin, stub.admin, extproc.admin);
      const a = await send(proxy, actor, { requestId: `${change}-1` });
      assert.equal(a.status, 200);
      assert.equal(a.app?.actor, actor);
      const now = await stubActor(stub, actor);
      assert.equal(now.status, 'RUNNING');
      assert.equal(a.app?.worker, now.workerIp, 'served by the worker the actor runs on now');
      if (change === 'move') assert.notEqual(a.app?.worker, oldWorker);
      const s = await proxyStats(proxy);
      assert.deepEqual(s.cache.evictions, { stale: 1, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 });
      assert.deepEqual(s.reruns, { stale: 1, connect: 0, reset: 0 });
      assert.equal((await extprocStats(extproc)).streams.total, 1);
      assert.equal(await resumeCalls(stub), 1);
      assert.equal((await accessLine(proxy, `${change}-1`)).cache, 'rerun');
      // The binding was re-learned: the next request is a hit on the new worker.
      const next = await send(proxy, actor);
      assert.equal(next.app?.worker, now.workerIp);
      assert.equal((await proxyStats(proxy)).cache.hits, 2);
    });
  }

  test("stop the actor's worker between two requests: 200 from another worker after one eviction and one re-run", async () => {
    const actor = actorName(2);
    const oldWorker = await warm(proxy, actor);
    // Every other binding this proxy holds to that worker (earlier tests' actors may live there) is evicted with it.
    const dump = await adminJson<{ bindings: { address: string }[] }>(proxy.admin, '/cache?limit=10000');
    const alsoThere = dump.bindings.filter((b) => b.address === `${oldWorker}:${stub.workerPort}`).length - 1;
    await admin(`/workers/${oldWorker}/stop`);
    try {
      await resetStats(proxy.admin);
      const a = await send(proxy, actor);
      assert.equal(a.status, 200);
      assert.equal(a.app?.actor, actor);
      assert.notEqual(a.app?.worker, oldWorker);
      const s = await proxyStats(proxy);
      // The stub destroys the worker's open connections before its stop call returns, so by the time this request
      // is sent the proxy's pool has dropped its keep-alive connection: the attempt is a connect failure, not a reset.
      assert.deepEqual(s.cache.evictions, { stale: 0, connect: 1, reset: 0, identity: 0, worker: alsoThere, ttl: 0, lru: 0, admin: 0 });
      assert.deepEqual(s.reruns, { stale: 0, connect: 1, reset: 0 });
      assert.equal(s.upstream.connectFailures, 1);
    } finally {
      await admin(`/workers/${oldWorker}/start`);
    }
  });

  test('a POST body replayed on the re-run arrives intact and exactly once', async () => {
    const actor = actorName(3);
    await warm(proxy, actor);
    await admin(`/actors/${ATESPACE}/${actor}/move`);
    await resetStats(proxy.admin, stub.admin);
    const body = randomBytes(200 * 1024);
    const a = await send(proxy, actor, { method: 'POST', path: '/orders', body, requestId: 'replayed-post' });
    assert.equal(a.status, 200);
    assert.equal(a.app?.method, 'POST');
    assert.equal(a.app?.bodyLength, body.length);
    assert.equal(a.app?.bodySha256, createHash('sha256').update(body).digest('hex'));
    assert.equal(a.app?.requestId, 'replayed-post');
    assert.deepEqual((await proxyStats(proxy)).reruns, { stale: 1, connect: 0, reset: 0 });
    const ids = (await stubActor(stub, actor)).requestIds.filter((id) => id === 'replayed-post');
    assert.equal(ids.length, 1, 'the actor received the request exactly once');
    assert.equal((await stubStats(stub)).deliveries.duplicates, 0);
  });

  test('a late stale answer for an old binding does not evict the newer binding', async () => {
    const actor = actorName(4);
    const key = `${ATESPACE}/${actor}`;
    const oldWorker = await warm(proxy, actor);
    await admin(`/actors/${ATESPACE}/${actor}/move`);
    await resetStats(proxy.admin, stub.admin);
    const bindingOf = async (): Promise<{ generation: number; address: string } | undefined> =>
      (await adminJson<{ bindings: { key: string; generation: number; address: string }[] }>(proxy.admin, '/cache?limit=10000')).bindings.find(
        (b) => b.key === key,
      );

    // The slow request is routed from the old binding when its headers arrive, but the router cannot send it to
    // the old worker before the first body byte, which the client holds back.
    const slow = startHeldPost(proxy.ingress, hostOf(actor), 'late-stale');
    try {
      await waitFor(async () => (await proxyStats(proxy)).cache.hits === 1, 5000, 'the slow request to hit the old binding');

      // Meanwhile another request hits the same old binding, is told it is stale, evicts it, re-runs and learns
      // the new binding.
      const fast = await send(proxy, actor, { requestId: 'fast' });
      assert.equal(fast.status, 200);
      assert.notEqual(fast.app?.worker, oldWorker);
      assert.equal((await accessLine(proxy, 'fast')).cache, 'rerun');
      const learned = await bindingOf();
      assert.ok(learned);
      assert.equal((await stubStats(stub)).workers[oldWorker]?.misdirected, 1, 'only the fast request has been told stale so far');

      // Now the slow request reaches the old worker and hears "stale" late.
      const late = await slow.finish('late body');
      assert.equal(late.status, 200);
      assert.equal((JSON.parse(late.body) as { worker: string }).worker, fast.app?.worker);
      assert.equal((await stubStats(stub)).workers[oldWorker]?.misdirected, 2);

      const s = await proxyStats(proxy);
      assert.equal(s.cache.evictions.stale, 1, 'the late answer evicted nothing: the binding it used was already gone');
      assert.equal(s.reruns.stale, 2);
      assert.equal((await bindingOf())?.generation, learned.generation, 'the newer binding survived');
      assert.equal((await stubActor(stub, actor)).requestIds.filter((id) => id === 'late-stale').length, 1);
    } finally {
      slow.abandon();
    }
  });

  test('a body above the replay limit meeting a stale worker gets a clear error, is not delivered, and the binding is evicted', async () => {
    const actor = actorName(5);
    await warm(small, actor);
    await admin(`/actors/${ATESPACE}/${actor}/move`);
    await resetStats(small.admin, stub.admin);
    const body = randomBytes(REPLAY_LIMIT * 8);
    const a = await send(small, actor, { method: 'POST', body, requestId: 'too-big' });
    assert.equal(a.status, 503);
    assert.match(a.text, /too large to replay/);
    assert.equal(a.headers['x-ate-assignment-stale'], undefined);
    const s = await proxyStats(small);
    assert.equal(s.cache.evictions.stale, 1);
    assert.deepEqual(s.reruns, { stale: 0, connect: 0, reset: 0 });
    assert.equal((await stubActor(stub, actor)).requestIds.includes('too-big'), false);
    assert.equal((await stubStats(stub)).deliveries.duplicates, 0);
    // The binding is gone, so the next request takes the slow path and succeeds.
    const next = await send(small, actor, { method: 'POST', body: body.subarray(0, 100) });
    assert.equal(next.status, 200);
    assert.equal((await proxyStats(small)).cache.misses, 1);
  });

  test('a client that gives up on a cached request evicts nothing: the next request is still a hit', async () => {
    const actor = actorName(6);
    await warm(proxy, actor);
    await resetStats(proxy.admin, stub.admin, extproc.admin);
    const ingress = new URL(proxy.ingress);
    const req = http.request({
      host: ingress.hostname,
      port: ingress.port,
      path: '/?delay_ms=5000',
      headers: { host: hostOf(actor), 'x-request-id': 'abandoned-1' },
    });
    req.on('error', () => {}); // we destroy it ourselves
    req.end();
    // Wait until the request is being served upstream (a hit, routed to the worker), then hang up.
    await waitFor(async () => (await proxyStats(proxy)).cache.hits === 1, 5000, 'the request to reach the router');
    await waitFor(async () => (await stubActor(stub, actor)).requestIds.includes('abandoned-1'), 5000, 'the actor to receive it');
    req.destroy();
    await waitFor(async () => (await proxyStats(proxy)).requests.total === 1, 10_000, 'the proxy to finish the abandoned request');
    const after1 = await proxyStats(proxy);
    assert.equal(after1.requests.byStatus['4xx'], 1, 'the abandoned request is counted once, as 499');
    assert.equal((await accessLine(proxy, 'abandoned-1')).status, 499);
    assert.deepEqual(after1.cache.evictions, { stale: 0, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 });
    assert.deepEqual(after1.reruns, { stale: 0, connect: 0, reset: 0 });
    const next = await send(proxy, actor);
    assert.equal(next.status, 200);
    const s = await proxyStats(proxy);
    assert.equal(s.cache.hits, 2, 'the binding survived');
    assert.equal(s.extproc.streams, 0, 'no ext_proc stream was needed');
    assert.equal(await resumeCalls(stub), 0);
  });
});
