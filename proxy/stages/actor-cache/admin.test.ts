import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { BindingCache } from './binding-cache.js';
import { cacheAdminPlugin, listBindings } from './admin.js';
import { registerCacheMetrics } from './metrics.js';
import { cacheStatsBlock } from './stats.js';
import { MissFlights } from './miss-flights.js';

async function adminWith(cache: BindingCache | undefined) {
  const app = Fastify();
  await app.register(cacheAdminPlugin({ cache }));
  await app.ready();
  return app;
}

test('GET /cache dumps at most `limit` live bindings', async () => {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 100 });
  for (let i = 1; i <= 5; i++) cache.learn(`demo/a${i}`, `127.0.1.${i}:8443`);
  const app = await adminWith(cache);
  try {
    const res = await app.inject({ method: 'GET', url: '/cache?limit=2' });
    assert.equal(res.statusCode, 200);
    const body = res.json() as { entries: number; truncated: boolean; bindings: { key: string; address: string }[]; ttlMs: number };
    assert.equal(body.entries, 5);
    assert.equal(body.truncated, true);
    assert.equal(body.ttlMs, 60_000);
    assert.deepEqual(body.bindings.map((b) => [b.key, b.address]), [['demo/a5', '127.0.1.5:8443'], ['demo/a4', '127.0.1.4:8443']]);
    assert.equal((await app.inject({ method: 'GET', url: '/cache' })).json().bindings.length, 5);
    assert.equal((await app.inject({ method: 'GET', url: '/cache?limit=x' })).statusCode, 400);
  } finally {
    await app.close();
  }
});

test('a listing is bounded, most recent first, with the time left on the cache\'s clock; expired bindings are gone', () => {
  let now = 0;
  const cache = new BindingCache({ ttlMs: 1000, maxEntries: 100, clock: { now: () => now } });
  for (let i = 0; i < 10; i++) cache.learn(`demo/a${i}`, `127.0.1.${i + 1}:8443`);
  now = 250;
  const d = listBindings(cache, { limit: 3, order: 'recent' });
  assert.equal(d.entries, 10);
  assert.equal(d.matched, 10);
  assert.equal(d.truncated, true);
  assert.equal(d.next, null);
  assert.deepEqual(d.bindings.map((b) => b.key), ['demo/a9', 'demo/a8', 'demo/a7']);
  assert.equal(d.bindings[0]?.expiresInMs, 750);
  assert.equal(d.bindings[0]?.ageMs, 250);
  now = 1250;
  assert.deepEqual(listBindings(cache, { limit: 3, order: 'recent' }), { entries: 0, matched: 0, truncated: false, next: null, bindings: [] });
});

test('GET /cache shows per binding: address, generation, age, time left, hits, and whether a refresh is in flight', async () => {
  let now = 1000;
  const cache = new BindingCache({ ttlMs: 10_000, maxEntries: 100, refreshAheadFraction: 0.2, clock: { now: () => now } });
  const a = cache.learn('demo/a', '127.0.1.1:8443')!;
  const b = cache.learn('demo/b', '127.0.1.2:8443')!;
  now += 8500;
  cache.lookup('demo/a');
  const due = cache.lookup('demo/a');
  assert.ok(due.kind === 'hit' && due.refreshDue);
  assert.equal(cache.claimRefresh('demo/a', a.generation), true);
  const app = await adminWith(cache);
  try {
    const body = (await app.inject({ method: 'GET', url: '/cache' })).json() as { bindings: unknown[] };
    assert.deepEqual(body.bindings, [
      { key: 'demo/a', address: '127.0.1.1:8443', generation: a.generation, ageMs: 8500, expiresInMs: 1500, hits: 2, refreshing: true },
      { key: 'demo/b', address: '127.0.1.2:8443', generation: b.generation, ageMs: 8500, expiresInMs: 1500, hits: 0, refreshing: false },
    ]);
  } finally {
    await app.close();
  }
});

test('DELETE /cache/:atespace/:name evicts one binding; DELETE /cache evicts all; both count as admin', async () => {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 100 });
  cache.learn('demo/a', '127.0.1.1:8443');
  cache.learn('demo/b', '127.0.1.2:8443');
  cache.learn('demo/c', '127.0.1.3:8443');
  const app = await adminWith(cache);
  try {
    const one = await app.inject({ method: 'DELETE', url: '/cache/demo/a' });
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), { evicted: 1, key: 'demo/a' });
    assert.equal((await app.inject({ method: 'DELETE', url: '/cache/demo/a' })).statusCode, 404);
    assert.equal((await app.inject({ method: 'DELETE', url: '/cache/Demo/a_' })).statusCode, 400);
    const all = await app.inject({ method: 'DELETE', url: '/cache' });
    assert.deepEqual(all.json(), { evicted: 2 });
    assert.equal(cache.size, 0);
    assert.equal(cache.stats().evictions.admin, 3);
  } finally {
    await app.close();
  }
});

test('GET /cache/:atespace/:name answers one binding; 404 BINDING_NOT_FOUND when there is none, 400 for a bad name', async () => {
  let now = 1000;
  const cache = new BindingCache({ ttlMs: 10_000, maxEntries: 100, clock: { now: () => now } });
  const a = cache.learn('demo/actor-005', '127.0.1.5:8443')!;
  now += 250;
  const app = await adminWith(cache);
  try {
    const one = await app.inject({ method: 'GET', url: '/cache/demo/actor-005' });
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), {
      ttlMs: 10_000,
      binding: { key: 'demo/actor-005', address: '127.0.1.5:8443', generation: a.generation, ageMs: 250, expiresInMs: 9750, hits: 0, refreshing: false },
    });
    assert.equal(cache.stats().hits + cache.stats().misses, 0, 'looking at a binding is neither a hit nor a miss');
    const none = await app.inject({ method: 'GET', url: '/cache/demo/actor-006' });
    assert.equal(none.statusCode, 404);
    assert.deepEqual(none.json(), { error: 'no binding for demo/actor-006', code: 'BINDING_NOT_FOUND' });
    now += 10_000;
    assert.equal((await app.inject({ method: 'GET', url: '/cache/demo/actor-005' })).statusCode, 404, 'an expired binding is not answered');
    const bad = await app.inject({ method: 'GET', url: '/cache/Demo/x_y' });
    assert.deepEqual([bad.statusCode, bad.json().code], [400, 'BAD_REQUEST']);
  } finally {
    await app.close();
  }
});

test('DELETE /cache?worker= evicts every binding on that worker (an IP: any port; IP:PORT: exactly), counted as admin', async () => {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 100 });
  cache.learn('demo/a', '127.0.1.1:8443');
  cache.learn('demo/b', '127.0.1.1:8443');
  cache.learn('demo/c', '127.0.1.1:9443');
  cache.learn('demo/d', '127.0.1.10:8443');
  cache.learn('demo/e', '[::1]:8443');
  const app = await adminWith(cache);
  try {
    const exact = await app.inject({ method: 'DELETE', url: '/cache?worker=127.0.1.1:9443' });
    assert.deepEqual(exact.json(), { evicted: 1, worker: '127.0.1.1:9443' });
    const byIp = await app.inject({ method: 'DELETE', url: '/cache?worker=127.0.1.1' });
    assert.deepEqual(byIp.json(), { evicted: 2, worker: '127.0.1.1' });
    assert.deepEqual([...cache.bindings()].map(([key]) => key).sort(), ['demo/d', 'demo/e'], '127.0.1.10 is another worker');
    assert.deepEqual((await app.inject({ method: 'DELETE', url: '/cache?worker=[::1]' })).json(), { evicted: 1, worker: '[::1]' });
    assert.deepEqual((await app.inject({ method: 'DELETE', url: '/cache?worker=127.0.9.9' })).json(), { evicted: 0, worker: '127.0.9.9' });
    const bad = await app.inject({ method: 'DELETE', url: '/cache?worker=worker-1.example' });
    assert.deepEqual([bad.statusCode, bad.json().code], [400, 'BAD_REQUEST']);
    assert.equal(cache.size, 1, 'a refused call evicts nothing');
    assert.equal(cache.stats().evictions.admin, 4);
  } finally {
    await app.close();
  }
});

test('GET /cache pages by key with after/next, searches key and address, filters by worker, and refuses bad parameters', async () => {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 100 });
  for (let i = 0; i < 7; i++) cache.learn(`demo/actor-00${i}`, `127.0.1.${i % 2 === 0 ? 1 : 2}:8443`);
  const app = await adminWith(cache);
  const get = async (query: string): Promise<{ entries: number; matched: number; truncated: boolean; next: string | null; bindings: { key: string }[] }> =>
    (await app.inject({ method: 'GET', url: `/cache?${query}` })).json();
  try {
    const keys: string[] = [];
    let after: string | null = '';
    let pages = 0;
    while (after !== null) {
      const page = await get(`order=key&limit=3${after === '' ? '' : `&after=${after}`}`);
      keys.push(...page.bindings.map((b) => b.key));
      assert.equal(page.entries, 7);
      after = page.next;
      pages++;
    }
    assert.equal(pages, 3);
    assert.deepEqual(keys, ['demo/actor-000', 'demo/actor-001', 'demo/actor-002', 'demo/actor-003', 'demo/actor-004', 'demo/actor-005', 'demo/actor-006']);
    const first = await get('order=key&limit=3');
    assert.deepEqual([first.next, first.truncated, first.matched], ['demo/actor-002', true, 7]);
    const search = await get('q=actor-00');
    assert.equal(search.matched, 7);
    assert.deepEqual((await get('q=ACTOR-003')).bindings.map((b) => b.key), ['demo/actor-003'], 'case-insensitive');
    assert.deepEqual((await get('q=127.0.1.2&order=key')).bindings.map((b) => b.key), ['demo/actor-001', 'demo/actor-003', 'demo/actor-005'], 'the address is searched too');
    const onTwo = await get('worker=127.0.1.2&order=key&limit=2');
    assert.deepEqual([onTwo.matched, onTwo.next, onTwo.bindings.length], [3, 'demo/actor-003', 2]);
    const recent = await get('limit=2');
    assert.deepEqual([recent.bindings.map((b) => b.key), recent.next], [['demo/actor-006', 'demo/actor-005'], null], 'most recently used first; no cursor');
    for (const query of ['order=size', 'after=demo/a', 'limit=-1', 'worker=nope']) {
      const res = await app.inject({ method: 'GET', url: `/cache?${query}` });
      assert.deepEqual([res.statusCode, res.json().code], [400, 'BAD_REQUEST'], query);
    }
  } finally {
    await app.close();
  }
});

test('with the cache off the endpoints answer 404 and /stats says disabled', async () => {
  const app = await adminWith(undefined);
  try {
    for (const [method, url] of [['GET', '/cache'], ['DELETE', '/cache'], ['GET', '/cache/demo/a'], ['DELETE', '/cache?worker=127.0.0.1']] as const) {
      const res = await app.inject({ method, url });
      assert.deepEqual([res.statusCode, res.json().code], [404, 'CACHE_DISABLED'], `${method} ${url}`);
    }
  } finally {
    await app.close();
  }
  assert.deepEqual(cacheStatsBlock(undefined), {
    enabled: false,
    hits: 0,
    misses: 0,
    entries: 0,
    evictions: { stale: 0, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 },
    coalesced: { waits: 0, hit: 0, alone: 0, gone: 0 },
    refreshes: { enabled: false, ok: 0, failed: 0, inFlight: 0 },
    hitRatio: null,
  });
});

test('metrics read the cache counters when scraped', async () => {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 1 });
  const parts = { cache, flights: new MissFlights({ waitTimeoutMs: 1000 }), refresh: undefined };
  const registry = new Registry();
  registerCacheMetrics(registry, parts);
  cache.lookup('demo/a');
  cache.learn('demo/a', '127.0.1.1:8443');
  cache.lookup('demo/a');
  cache.learn('demo/b', '127.0.1.2:8443'); // pushes a out (lru)
  const text = await registry.metrics();
  assert.match(text, /^actor_edge_proxy_cache_hits_total 1$/m);
  assert.match(text, /^actor_edge_proxy_cache_misses_total 1$/m);
  assert.match(text, /^actor_edge_proxy_cache_evictions_total\{reason="lru"\} 1$/m);
  assert.match(text, /^actor_edge_proxy_cache_evictions_total\{reason="stale"\} 0$/m);
  assert.match(text, /^actor_edge_proxy_cache_entries 1$/m);
  cache.resetStats();
  assert.match(await registry.metrics(), /^actor_edge_proxy_cache_hits_total 1$/m, 'metrics never go down');
  assert.equal(cache.stats().hits, 0);
  parts.flights.count('hit');
  parts.flights.count('alone');
  const block = cacheStatsBlock(parts);
  assert.equal(block.enabled, true);
  assert.equal(block.entries, 1);
  assert.deepEqual(block.coalesced, { waits: 0, hit: 1, alone: 1, gone: 0 });
  assert.deepEqual(block.refreshes, { enabled: false, ok: 0, failed: 0, inFlight: 0 });
  assert.equal(block.hitRatio, null, 'no lookup since the reset');
  cache.lookup('demo/b');
  cache.lookup('demo/b');
  cache.lookup('demo/zzz');
  assert.equal(cacheStatsBlock(parts).hitRatio, 0.6667, 'two hits of three lookups');
  const after = await registry.metrics();
  assert.match(after, /^actor_edge_proxy_cache_coalesced_waits_total\{result="hit"\} 1$/m);
  assert.match(after, /^actor_edge_proxy_cache_coalesced_waits_total\{result="gone"\} 0$/m);
  assert.match(after, /^actor_edge_proxy_cache_refreshes_total\{result="ok"\} 0$/m);
  assert.match(after, /^actor_edge_proxy_cache_evictions_total\{reason="worker"\} 0$/m);
});
