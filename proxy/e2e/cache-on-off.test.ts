/**
 * End to end, cache on against cache off, one shared control plane: what a hit costs, what the cache-off path
 * costs, that clients see the same answers (including a differential corpus with suspends and moves), that forged
 * headers and an actor's own 421 change nothing, and the TTL and LRU bounds.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { request } from 'undici';
import { actorName, adminJson, client, extprocStats, proxyStats, resetStats, resumeCalls, send, startStack, stubActor, ATESPACE, type Answer, type Extproc, type Stack, type Stub } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';

/**
 * Long enough that the request right after a miss is a hit even on a loaded machine; short enough to wait out. (The
 * expiry itself, to the millisecond, is the binding cache's unit test, on a clock driven by hand.)
 */
const SHORT_TTL_MS = 1000;

let stack: Stack;
let stub: Stub;
let extproc: Extproc;
let on: InProcessTestProxy;
let off: InProcessTestProxy;
let short: InProcessTestProxy;
let small: InProcessTestProxy;

describe('cache on against cache off', () => {
  before(async () => {
    stack = await startStack({ stub: { workers: 8, capacity: 4, actors: 30 }, proxyArgs: ['--cache-ttl-ms', '60000'] });
    ({ stub, extproc, proxy: on } = stack);
    [off, short, small] = await Promise.all([
      stack.addProxy(['--actor-cache', 'off']),
      stack.addProxy(['--cache-ttl-ms', String(SHORT_TTL_MS), '--cache-refresh-ahead', 'off']), // the TTL itself, no refresh
      stack.addProxy(['--cache-ttl-ms', '60000', '--cache-max-entries', '3']),
    ]);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await stack?.stop();
  });

  /** What a client can tell about an answer, minus what legitimately differs per request. */
  function visible(a: Answer): unknown {
    const { seq: _seq, requestId: _id, ...app } = a.app ?? ({} as Record<string, unknown>);
    return { status: a.status, type: a.headers['content-type'], stale: a.headers['x-ate-assignment-stale'], app, text: a.app ? undefined : a.text };
  }

  async function sequential(p: InProcessTestProxy, actor: string, n: number): Promise<Answer[]> {
    const out: Answer[] = [];
    for (let i = 0; i < n; i++) out.push(await send(p, actor, { path: '/ping?x=1' }));
    return out;
  }

  test('cache on: the first request costs one ext_proc stream and one ResumeActor, the next 100 cost none', async () => {
    const actor = actorName(0);
    await resetStats(stub.admin, extproc.admin, on.admin);
    const first = await send(on, actor);
    assert.equal(first.status, 200);
    assert.equal(first.app?.actor, actor);
    assert.equal((await extprocStats(extproc)).streams.total, 1);
    assert.equal(await resumeCalls(stub), 1);

    const answers = await Promise.all(Array.from({ length: 100 }, () => send(on, actor)));
    for (const a of answers) {
      assert.equal(a.status, 200);
      assert.equal(a.app?.actor, actor);
      assert.equal(a.app?.worker, first.app?.worker);
    }
    assert.equal((await extprocStats(extproc)).streams.total, 1, 'hits open no ext_proc stream');
    assert.equal(await resumeCalls(stub), 1, 'hits call no ResumeActor');
    const s = await proxyStats(on);
    assert.equal(s.cache.enabled, true);
    assert.equal(s.cache.hits, 100);
    assert.equal(s.cache.misses, 1);
    assert.equal(s.cache.entries, 1);
    assert.equal(s.extproc.streams, 1);
    const metrics = await (await request(`${on.admin}/metrics`, { dispatcher: client })).body.text();
    assert.match(metrics, /^actor_edge_proxy_cache_hits_total 100$/m);
    assert.match(metrics, /^actor_edge_proxy_cache_misses_total 1$/m);
    assert.match(metrics, /^actor_edge_proxy_cache_entries 1$/m);
    for (const reason of ['stale', 'connect', 'reset', 'identity', 'worker', 'ttl', 'lru', 'admin']) {
      assert.match(metrics, new RegExp(`^actor_edge_proxy_cache_evictions_total\\{reason="${reason}"\\} 0$`, 'm'));
    }
    assert.match(metrics, /^actor_edge_proxy_reruns_total\{reason="stale"\} 0$/m);
  });

  test('cache off: 100 requests cost 100 streams and 100 ResumeActor calls, and clients see the same answers', async () => {
    const actor = actorName(1);
    await send(on, actor); // learn it on the cache-on proxy
    await resetStats(stub.admin, extproc.admin, off.admin);
    const viaOff = await sequential(off, actor, 100);
    assert.equal((await extprocStats(extproc)).streams.total, 100);
    assert.equal(await resumeCalls(stub), 100);
    const s = await proxyStats(off);
    assert.equal(s.cache.enabled, false);
    assert.equal(s.cache.hits + s.cache.misses, 0);
    assert.equal(s.extproc.streams, 100);

    await resetStats(stub.admin, extproc.admin);
    const viaOn = await sequential(on, actor, 100);
    assert.equal((await extprocStats(extproc)).streams.total, 0);
    assert.equal(await resumeCalls(stub), 0);
    assert.deepEqual(viaOn.map(visible), viaOff.map(visible));
    assert.equal(viaOn[0]?.app?.actor, actor);
  });

  test('client-forged internal headers cannot skip ext_proc, choose another actor or worker, fake a stale answer, or reach the actor', async () => {
    const cached = actorName(2);
    const cold = actorName(3);
    const first = await send(on, cached);
    assert.equal(first.status, 200);
    const otherWorker = stub.workerIps.find((ip) => ip !== first.app?.worker) as string;
    const forged = {
      'x-ate-target-port': '9999',
      'ate-endpoint-cached': '1',
      'ate-target-actor': `${ATESPACE}/${cold}`,
      'x-envoy-original-dst-host': `${otherWorker}:${stub.workerPort}`,
      'x-ate-original-dst': `${otherWorker}:${stub.workerPort}`,
      'x-ate-original-host': `${cold}.${ATESPACE}.actors.resources.substrate.ate.dev`,
      'x-ate-assignment-stale': 'true',
    };
    // A hit: still the actor Host names, on its own worker, with no forged header reaching it.
    await resetStats(extproc.admin, on.admin);
    const hit = await send(on, cached, { path: '/?echo_headers=1', headers: forged });
    assert.equal(hit.status, 200);
    assert.equal(hit.app?.actor, cached);
    assert.equal(hit.app?.worker, first.app?.worker);
    for (const h of Object.keys(forged)) assert.equal(hit.app?.headers?.[h], undefined, `${h} reached the actor`);
    assert.equal((await proxyStats(on)).cache.evictions.stale, 0);

    // A miss: the forged headers do not skip ext_proc.
    const miss = await send(on, cold, { path: '/?echo_headers=1', headers: forged });
    assert.equal(miss.status, 200);
    assert.equal(miss.app?.actor, cold);
    assert.equal((await stubActor(stub, cold)).workerIp, miss.app?.worker);
    assert.equal((await extprocStats(extproc)).streams.total, 1, 'the miss went through ext_proc');
    const s = await proxyStats(on);
    assert.equal(s.cache.hits, 1);
    assert.equal(s.cache.misses, 1);
  });

  test('an actor forging 421 + x-ate-assignment-stale causes no eviction, and its 421 reaches the client', async () => {
    const actor = actorName(4);
    assert.equal((await send(on, actor)).status, 200);
    const before = await adminJson<{ bindings: { key: string; generation: number }[] }>(on.admin, '/cache?limit=10000');
    const generation = before.bindings.find((b) => b.key === `${ATESPACE}/${actor}`)?.generation;
    assert.ok(generation !== undefined);
    await resetStats(on.admin, extproc.admin);
    const forged = await send(on, actor, { headers: { 'x-demo-forge-stale': '1' } });
    assert.equal(forged.status, 421);
    assert.equal(forged.text, 'misdirected request');
    assert.equal(forged.headers['x-ate-assignment-stale'], undefined);
    const s = await proxyStats(on);
    assert.equal(s.cache.hits, 1);
    assert.deepEqual(s.cache.evictions, { stale: 0, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 });
    assert.deepEqual(s.reruns, { stale: 0, connect: 0, reset: 0 });
    const after = await adminJson<{ bindings: { key: string; generation: number }[] }>(on.admin, '/cache?limit=10000');
    assert.equal(after.bindings.find((b) => b.key === `${ATESPACE}/${actor}`)?.generation, generation);
    assert.equal((await send(on, actor)).status, 200);
    assert.equal((await extprocStats(extproc)).streams.total, 0);
  });

  test('a binding is served for the TTL, then the next request misses', async () => {
    const actor = actorName(5);
    await resetStats(short.admin);
    assert.equal((await send(short, actor)).status, 200);
    assert.equal((await send(short, actor)).status, 200);
    let s = await proxyStats(short);
    assert.deepEqual([s.cache.misses, s.cache.hits], [1, 1]);
    // Wait for the binding to expire (the dump purges expired bindings, counting them as ttl evictions).
    await waitFor(async () => (await adminJson<{ entries: number }>(short.admin, '/cache')).entries === 0, SHORT_TTL_MS + 20_000, 'the TTL to pass');
    const misses = (await proxyStats(short)).cache.misses;
    assert.equal((await send(short, actor)).status, 200);
    s = await proxyStats(short);
    assert.equal(s.cache.misses, misses + 1);
    assert.equal(s.cache.evictions.ttl, 1);
  });

  test('the LRU bound keeps the most recently used bindings', async () => {
    const [a, b, c, d] = [10, 11, 12, 13].map(actorName) as [string, string, string, string];
    await resetStats(small.admin);
    for (const actor of [a, b, c]) assert.equal((await send(small, actor)).status, 200);
    assert.equal((await send(small, a)).status, 200); // a is now more recent than b
    assert.equal((await send(small, d)).status, 200); // evicts b
    let s = await proxyStats(small);
    assert.equal(s.cache.entries, 3);
    assert.equal(s.cache.evictions.lru, 1);
    assert.equal(s.cache.misses, 4);
    const keys = (await adminJson<{ bindings: { key: string }[] }>(small.admin, '/cache')).bindings.map((x) => x.key).sort();
    assert.deepEqual(keys, [a, c, d].map((x) => `${ATESPACE}/${x}`).sort());
    assert.equal((await send(small, b)).status, 200);
    s = await proxyStats(small);
    assert.equal(s.cache.misses, 5, 'the evicted actor misses again');
  });

  type Step =
    | { readonly kind: 'get' | 'post'; readonly actor: string }
    | { readonly kind: 'suspend' | 'move'; readonly actor: string }
    | { readonly kind: 'host'; readonly host: string };

  /** GETs and POSTs to several actors with suspends and moves between them, plus hosts that name no running actor. */
  function corpus(): Step[] {
    const actors = [20, 21, 22, 23].map(actorName);
    const steps: Step[] = [];
    for (let round = 0; round < 4; round++) {
      actors.forEach((actor, i) => {
        steps.push({ kind: (round + i) % 2 === 0 ? 'get' : 'post', actor });
        steps.push({ kind: 'get', actor });
      });
      const target = actors[round % actors.length] as string;
      steps.push({ kind: round % 2 === 0 ? 'move' : 'suspend', actor: target });
      steps.push({ kind: 'post', actor: target });
      steps.push({ kind: 'suspend', actor: actors[(round + 1) % actors.length] as string });
    }
    steps.push({ kind: 'host', host: `no-such-actor.${ATESPACE}.actors.resources.substrate.ate.dev` });
    steps.push({ kind: 'host', host: 'example.com' });
    return steps;
  }

  async function runCorpus(p: InProcessTestProxy, steps: readonly Step[]): Promise<{ status: number; actor: string | undefined; body: number | undefined }[]> {
    const seen: { status: number; actor: string | undefined; body: number | undefined }[] = [];
    for (const step of steps) {
      switch (step.kind) {
        case 'suspend':
        case 'move': {
          const state = await stubActor(stub, step.actor);
          if (step.kind === 'move' && state.status !== 'RUNNING') break;
          await adminJson(stub.admin, `/actors/${ATESPACE}/${step.actor}/${step.kind}`, 'POST');
          break;
        }
        case 'host': {
          const a = await send(p, '', { host: step.host });
          seen.push({ status: a.status, actor: a.app?.actor, body: undefined });
          break;
        }
        default: {
          const body = step.kind === 'post' ? Buffer.alloc(3000, 7) : undefined;
          const a = await send(p, step.actor, body ? { method: 'POST', body } : {});
          seen.push({ status: a.status, actor: a.app?.actor, body: a.app?.bodyLength });
        }
      }
    }
    return seen;
  }

  test('differential: one corpus through the cache-on and the cache-off proxy gives the same status and actor for every request', async () => {
    const steps = corpus();
    const suspendAll = async (): Promise<void> => {
      for (const actor of [20, 21, 22, 23].map(actorName)) await adminJson(stub.admin, `/actors/${ATESPACE}/${actor}/suspend`, 'POST');
    };
    await suspendAll();
    await resetStats(on.admin);
    const withCache = await runCorpus(on, steps);
    await suspendAll();
    const withoutCache = await runCorpus(off, steps);
    assert.deepEqual(withCache, withoutCache);
    assert.deepEqual(
      withCache.map((r) => r.status),
      [...Array.from({ length: 36 }, () => 200), 404, 404],
    );
    // The corpus is sequential, so its cache traffic is exact: 4 first lookups miss; 8 suspends and moves, of which
    // 7 are followed by a request to their actor (the last suspend is not), so 7 hits meet a stale worker, evict and
    // re-run, and each re-run misses; the unknown actor misses too. Every other lookup of the 36 requests and 7
    // re-runs hits. ext_proc sees every miss plus the host that names no actor.
    const s = await proxyStats(on);
    assert.deepEqual([s.cache.hits, s.cache.misses, s.reruns.stale, s.cache.evictions.stale, s.extproc.streams], [32, 12, 7, 7, 13]);
  });
});
