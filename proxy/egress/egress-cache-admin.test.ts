import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { egressCacheAdminPlugin, type ListedVerdict } from './egress-cache-admin.js';
import { cacheAdminPlugin } from '../stages/actor-cache/admin.js';
import { BindingCache } from '../stages/actor-cache/binding-cache.js';
import { EgressVerdictCache } from './verdict-cache.js';
import { ALLOW, DENY, digest, egressKey, fakeClock } from './testing/verdicts.js';

const TTL = 5000;

/** demo/a with two certificates (a, b) and demo/c with one (c), to two destinations each. */
function filled() {
  const clock = fakeClock();
  const cache = new EgressVerdictCache({ ttlMs: TTL, maxEntries: 100, now: clock.now });
  for (const [c, name] of [['a', 'a'], ['b', 'a'], ['c', 'c']] as const) {
    cache.store(egressKey(digest(c), '127.0.0.1:9000', { atespace: 'demo', name }), ALLOW, Infinity);
    cache.store(egressKey(digest(c), '[::1]:22', { atespace: 'demo', name }), DENY, clock.now() + 1000);
    clock.advance(100);
  }
  return { clock, cache };
}

async function adminWith(cache: EgressVerdictCache | undefined) {
  const app = Fastify();
  await app.register(egressCacheAdminPlugin({ cache }));
  await app.ready();
  return app;
}

test('GET /cache/egress lists live verdicts, most recently used first, at most `limit`, with what each one is', async () => {
  const { clock, cache } = filled();
  cache.lookup(egressKey(digest('a')));
  const app = await adminWith(cache);
  try {
    const res = await app.inject({ method: 'GET', url: '/cache/egress?limit=2' });
    assert.equal(res.statusCode, 200);
    const body = res.json() as { ttlMs: number; maxEntries: number; entries: number; matched: number; truncated: boolean; verdicts: ListedVerdict[] };
    assert.deepEqual({ ...body, verdicts: undefined }, { ttlMs: TTL, maxEntries: 100, entries: 6, matched: 6, truncated: true, verdicts: undefined });
    assert.deepEqual(body.verdicts, [
      { certDigest: digest('a'), atespace: 'demo', name: 'a', destination: '127.0.0.1:9000', verdict: 'allow', status: 200, outcome: 'allowed', rule: 0, expiresInMs: TTL - 300, ageMs: 300, hits: 1, origin: 0 },
      { certDigest: digest('c'), atespace: 'demo', name: 'c', destination: '[::1]:22', verdict: 'deny', status: 403, outcome: 'denied', rule: null, expiresInMs: 900, ageMs: 100, hits: 0, origin: 0 },
    ]);
    clock.advance(1000); // every deny has passed its certificate's NotAfter
    const later = (await app.inject({ method: 'GET', url: '/cache/egress' })).json() as { entries: number; verdicts: ListedVerdict[] };
    assert.equal(later.entries, 3);
    assert.ok(later.verdicts.every((v) => v.verdict === 'allow'));
    for (const url of ['/cache/egress?limit=x', '/cache/egress?limit=-1', '/cache/egress?actor=demo', '/cache/egress?actor=Demo/a', '/cache/egress?cert=xyz']) {
      const bad = await app.inject({ method: 'GET', url });
      assert.equal(bad.statusCode, 400, url);
      assert.equal(bad.json().code, 'BAD_REQUEST', url);
    }
  } finally {
    await app.close();
  }
});

test('GET /cache/egress: a verdict decided on the traffic is listed with its rules and no rule of its own', async () => {
  const cache = new EgressVerdictCache({ ttlMs: TTL, maxEntries: 100 });
  const rules = [{ rule: 1, hostnames: ['api.example.com', '*.svc.test'] }];
  cache.store(egressKey(digest('a')), { kind: 'hostnames', actorId: 'uid-a', atespace: 'demo', name: 'a', rules }, Infinity);
  const app = await adminWith(cache);
  try {
    const [listed] = ((await app.inject({ method: 'GET', url: '/cache/egress' })).json() as { verdicts: ListedVerdict[] }).verdicts;
    assert.deepEqual([listed?.verdict, listed?.status, listed?.outcome, listed?.rule, listed?.hostnames], ['hostnames', 200, 'allowed', null, rules]);
  } finally {
    await app.close();
  }
});

test('GET /cache/egress?actor= and ?cert= list one actor\'s or one certificate\'s verdicts', async () => {
  const { cache } = filled();
  const app = await adminWith(cache);
  try {
    const byActor = (await app.inject({ method: 'GET', url: '/cache/egress?actor=demo/a' })).json() as { matched: number; verdicts: ListedVerdict[] };
    assert.equal(byActor.matched, 4);
    assert.ok(byActor.verdicts.every((v) => v.name === 'a'));
    const byCert = (await app.inject({ method: 'GET', url: `/cache/egress?cert=${digest('C')}` })).json() as { matched: number; verdicts: ListedVerdict[] };
    assert.equal(byCert.matched, 2, 'the digest is matched case-insensitively');
    assert.ok(byCert.verdicts.every((v) => v.certDigest === digest('c')));
  } finally {
    await app.close();
  }
});

test('DELETE /cache/egress evicts by actor, by certificate or all, says how many went, and counts them as admin', async () => {
  const { cache } = filled();
  const app = await adminWith(cache);
  try {
    const byCert = await app.inject({ method: 'DELETE', url: `/cache/egress?cert=${digest('b')}` });
    assert.equal(byCert.statusCode, 200);
    assert.deepEqual(byCert.json(), { evicted: 2, cert: digest('b') });
    assert.deepEqual((await app.inject({ method: 'DELETE', url: '/cache/egress?actor=demo/a' })).json(), { evicted: 2, actor: 'demo/a' });
    assert.deepEqual((await app.inject({ method: 'DELETE', url: '/cache/egress?actor=demo/a' })).json(), { evicted: 0, actor: 'demo/a' }, 'nothing left: 0, not an error');
    assert.equal(cache.size, 2);
    for (const url of ['/cache/egress', '/cache/egress?all=yes', `/cache/egress?all=true&cert=${digest('c')}`, '/cache/egress?actor=demo/a/b', '/cache/egress?cert=abc']) {
      const bad = await app.inject({ method: 'DELETE', url });
      assert.equal(bad.statusCode, 400, url);
      assert.equal(bad.json().code, 'BAD_REQUEST', url);
    }
    assert.equal(cache.size, 2, 'a refused call evicts nothing');
    assert.deepEqual((await app.inject({ method: 'DELETE', url: '/cache/egress?all=true' })).json(), { evicted: 2, all: true });
    assert.equal(cache.size, 0);
    assert.equal(cache.stats().evictions.admin, 6);
  } finally {
    await app.close();
  }
});

test('with --egress-cache off the routes answer 404 EGRESS_CACHE_DISABLED', async () => {
  const app = await adminWith(undefined);
  try {
    for (const [method, url] of [['GET', '/cache/egress'], ['DELETE', '/cache/egress?all=true']] as const) {
      const res = await app.inject({ method, url });
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.equal(res.json().code, 'EGRESS_CACHE_DISABLED');
    }
  } finally {
    await app.close();
  }
});

test("the egress routes live beside the bindings' /cache routes without shadowing them", async () => {
  const bindings = new BindingCache({ ttlMs: 60_000, maxEntries: 10 });
  bindings.learn('demo/egress', '127.0.1.1:8443');
  const { cache } = filled();
  const app = Fastify();
  await app.register(cacheAdminPlugin({ cache: bindings }));
  await app.register(egressCacheAdminPlugin({ cache }));
  await app.ready();
  try {
    assert.equal((await app.inject({ method: 'GET', url: '/cache/egress' })).json().entries, 6);
    assert.equal((await app.inject({ method: 'GET', url: '/cache/demo/egress' })).json().binding.address, '127.0.1.1:8443');
    assert.equal((await app.inject({ method: 'GET', url: '/cache' })).json().entries, 1);
    assert.deepEqual((await app.inject({ method: 'DELETE', url: '/cache' })).json(), { evicted: 1 }, 'DELETE /cache is the bindings\' alone');
    assert.equal(cache.size, 6);
  } finally {
    await app.close();
  }
});
