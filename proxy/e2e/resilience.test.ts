/**
 * End to end (real apiserver-stub, extproc and proxy, in the test's process): miss coalescing (N concurrent
 * requests to a cold actor cost one ext_proc stream and one ResumeActor), a leader's failure is not handed to
 * its followers, a connect failure to a stopped worker evicts every binding to it at once (counted exactly),
 * and refresh-ahead keeps an actor in use a hit across several TTLs while an idle actor's binding just expires.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { request } from 'undici';
import { actorName, adminJson, client, extprocStats, hostOf, proxyStats, resetStats, resumeCalls, send, startStack, ATESPACE, type Extproc, type Stack, type Stub } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';

let stack: Stack;
let stub: Stub;
let extproc: Extproc;
/** Long TTL: bindings outlive every test. */
let proxy: InProcessTestProxy;
/** Short TTL, refresh-ahead on (the default). */
let refreshing: InProcessTestProxy;
/**
 * Long enough that a request every few milliseconds always lands in the last 20 % (800 ms) of a binding's life, and
 * the refresh it starts through the real extproc and control plane is back well before the binding expires, also
 * while other test files load both cores (a 200 ms window at a 1000 ms TTL was sometimes missed there, and a 500 ms
 * one at 2500 ms once). (The timing itself, TTL after TTL, is the actor-cache filter's unit test, on a clock driven
 * by hand.)
 */
const REFRESH_TTL_MS = 4000;

describe('miss coalescing and resilience', () => {
  before(async () => {
    // Three workers: warming eight actors puts at least three on one worker, and two workers can hold them all.
    // A follower waits at most the message timeout: generous, so a slow machine cannot split a flight.
    stack = await startStack({ stub: { workers: 3, capacity: 10, actors: 30, coldResumeMs: 300 }, proxyArgs: ['--cache-ttl-ms', '600000', '--extproc-message-timeout-ms', '20000'] });
    ({ stub, extproc, proxy } = stack);
    refreshing = await stack.addProxy(['--cache-ttl-ms', String(REFRESH_TTL_MS), '--extproc-message-timeout-ms', '20000']);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await stack?.stop();
  });

  const stubPost = (path: string, body?: unknown): Promise<unknown> => adminJson(stub.admin, path, body === undefined ? 'POST' : 'PUT', body);

  test('coalescing: 20 concurrent requests to a cold actor cost one ext_proc stream and one ResumeActor, and all answer 200', async () => {
    const actor = actorName(0);
    await resetStats(stub.admin, extproc.admin, proxy.admin);
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(proxy, actor)));
    for (const a of answers) {
      assert.equal(a.status, 200);
      assert.equal(a.app?.actor, actor);
      assert.equal(a.app?.worker, answers[0]?.app?.worker);
    }
    assert.equal((await extprocStats(extproc)).streams.total, 1);
    assert.equal(await resumeCalls(stub), 1);
    const s = await proxyStats(proxy);
    assert.equal(s.extproc.streams, 1);
    // Each request either waited for the first one's miss or (arriving after it learned) hit.
    assert.equal(s.cache.coalesced.hit + s.cache.hits, 19);
    assert.equal(s.cache.misses, 1 + s.cache.coalesced.waits);
    assert.deepEqual([s.cache.coalesced.alone, s.cache.coalesced.gone], [0, 0]);
    assert.equal(s.cache.entries, 1);
  });

  test("coalescing: a leader's failure (its client leaves mid-resume) is not handed on: each follower runs its own slow path and gets 200", async () => {
    const actor = actorName(1);
    await stubPost('/config', { coldResumeMs: 2500 }); // time for five followers to join (they do in milliseconds)
    try {
      await resetStats(stub.admin, extproc.admin, proxy.admin);
      const leaderClient = new AbortController();
      const leader = request(`${proxy.ingress}/`, { headers: { host: hostOf(actor) }, dispatcher: client, signal: leaderClient.signal });
      leader.catch(() => undefined);
      await waitFor(async () => (await proxyStats(proxy)).extproc.active === 1, 10_000, "the leader's ext_proc stream");
      const followers = Array.from({ length: 5 }, () => send(proxy, actor));
      await waitFor(async () => (await proxyStats(proxy)).cache.coalesced.waits === 5, 10_000, 'five followers waiting');
      leaderClient.abort();
      const answers = await Promise.all(followers);
      for (const a of answers) {
        assert.equal(a.status, 200);
        assert.equal(a.app?.actor, actor);
      }
      const s = await proxyStats(proxy);
      assert.deepEqual(s.cache.coalesced, { waits: 5, hit: 0, alone: 5, gone: 0 });
      assert.equal(s.extproc.streams, 6, "the leader's stream and one per follower");
      assert.equal(s.cache.misses, 6);
    } finally {
      await stubPost('/config', { coldResumeMs: 300 });
    }
  });

  test('evict by worker: a stopped worker costs one failed connect; the other actors on it go straight to the slow path', async () => {
    // Learn eight bindings, then pick the worker that holds the most of them (at least three).
    const actors = Array.from({ length: 8 }, (_, i) => actorName(10 + i));
    const byWorker = new Map<string, string[]>();
    // Learned at once (distinct actors: eight slow paths side by side, each its own cold resume).
    for (const [actor, a] of await Promise.all(actors.map(async (actor) => [actor, await send(proxy, actor)] as const))) {
      assert.equal(a.status, 200);
      const list = byWorker.get(a.app?.worker as string) ?? [];
      list.push(actor);
      byWorker.set(a.app?.worker as string, list);
    }
    const [worker, onWorker] = [...byWorker].sort((x, y) => y[1].length - x[1].length)[0] as [string, string[]];
    assert.ok(onWorker.length >= 3, `worker ${worker} holds ${onWorker.length} of the actors`);
    const elsewhere = actors.filter((a) => !onWorker.includes(a));

    // Every binding this proxy holds to that worker (earlier tests' actors may live there too).
    const address = `${worker}:${stub.workerPort}`;
    const dump = await adminJson<{ bindings: { key: string; address: string }[] }>(proxy.admin, '/cache?limit=10000');
    const boundThere = dump.bindings.filter((b) => b.address === address).length;
    assert.ok(boundThere >= onWorker.length);

    await stubPost(`/workers/${worker}/stop`);
    try {
      await resetStats(proxy.admin);
      // The first request hits the dead worker: one connect failure, its binding evicted (connect), every other
      // binding to that worker evicted with it (worker), then a re-run through ext_proc.
      const first = await send(proxy, onWorker[0] as string);
      assert.equal(first.status, 200);
      assert.notEqual(first.app?.worker, worker);
      let s = await proxyStats(proxy);
      assert.equal(s.upstream.connectFailures, 1);
      assert.equal(s.cache.evictions.connect, 1);
      assert.equal(s.cache.evictions.worker, boundThere - 1);
      assert.equal(s.reruns.connect, 1);

      // The other actors of that worker go straight to the slow path: no connect failure, no re-run.
      for (const a of await Promise.all(onWorker.slice(1).map((actor) => send(proxy, actor)))) {
        assert.equal(a.status, 200);
        assert.notEqual(a.app?.worker, worker);
      }
      // Actors on other workers are still hits.
      for (const actor of elsewhere) assert.equal((await send(proxy, actor)).status, 200);
      s = await proxyStats(proxy);
      assert.equal(s.upstream.connectFailures, 1, 'exactly one connect failure in all');
      assert.deepEqual(s.reruns, { stale: 0, connect: 1, reset: 0 });
      assert.deepEqual(s.cache.evictions, { stale: 0, connect: 1, reset: 0, identity: 0, worker: boundThere - 1, ttl: 0, lru: 0, admin: 0 });
      assert.equal(s.cache.misses, onWorker.length, "the first actor's re-run and each other actor of the worker once");
      assert.equal(s.cache.hits, 1 + elsewhere.length);
      const metrics = await (await request(`${proxy.admin}/metrics`, { dispatcher: client })).body.text();
      assert.match(metrics, new RegExp(`^actor_edge_proxy_cache_evictions_total\\{reason="worker"\\} ${boundThere - 1}$`, 'm'));
    } finally {
      await stubPost(`/workers/${worker}/start`);
    }
  });

  test('refresh-ahead: an actor in use stays a hit across several TTLs (one ResumeActor per TTL); an idle actor just expires', async () => {
    const hot = actorName(20);
    const idle = actorName(21);
    const key = (actor: string): string => `${ATESPACE}/${actor}`;
    const binding = async (actor: string): Promise<{ generation: number; hits: number; refreshing: boolean } | undefined> =>
      (await adminJson<{ bindings: { key: string; generation: number; hits: number; refreshing: boolean }[] }>(refreshing.admin, '/cache')).bindings.find(
        (b) => b.key === key(actor),
      );
    await resetStats(stub.admin, extproc.admin, refreshing.admin);
    assert.equal((await send(refreshing, idle)).status, 200);
    assert.equal((await send(refreshing, hot)).status, 200);
    const firstGeneration = (await binding(hot))?.generation as number;

    // Keep the hot actor in use until its binding has been renewed three times (three TTLs and more).
    let requests = 0;
    await waitFor(
      async () => {
        const a = await send(refreshing, hot);
        assert.equal(a.status, 200);
        requests++;
        return (await proxyStats(refreshing)).cache.refreshes.ok >= 3;
      },
      30_000,
      'three refreshes of the hot binding',
    );
    // The idle binding was never refreshed: it expires (the dump purges it) while the hot one lives on.
    await waitFor(async () => (await binding(idle)) === undefined, 10_000, 'the idle binding to expire');
    await waitFor(async () => (await proxyStats(refreshing)).cache.refreshes.inFlight === 0, 10_000, 'no refresh in flight');
    const s = await proxyStats(refreshing);
    assert.equal(s.cache.misses, 2, 'after the first request of each actor, no request-path miss');
    assert.equal(s.cache.hits, requests);
    assert.equal(s.cache.refreshes.failed, 0);
    const refreshes = s.cache.refreshes.ok;
    assert.ok((await binding(hot))?.generation as number >= firstGeneration + 3);
    // Every ext_proc stream and ResumeActor is one of the two first misses or a refresh of the hot actor.
    assert.equal((await extprocStats(extproc)).streams.total, 2 + refreshes);
    assert.equal(await resumeCalls(stub), 2 + refreshes);
    const metrics = await (await request(`${refreshing.admin}/metrics`, { dispatcher: client })).body.text();
    assert.match(metrics, new RegExp(`^actor_edge_proxy_cache_refreshes_total\\{result="ok"\\} ${refreshes}$`, 'm'));
  });
});
