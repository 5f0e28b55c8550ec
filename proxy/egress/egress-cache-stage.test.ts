import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import Fastify from 'fastify';
import { createEgressStage } from './egress-cache-stage.js';
import type { Resolution } from './verdict-cache.js';
import { ALLOW, deferred, DENY, digest, egressKey, fakeClock, UNAVAILABLE } from './testing/verdicts.js';

const ON = { enabled: true, ttlMs: 5000, maxEntries: 100 };
const A = egressKey(digest('a'));
const HOUR = 3_600_000;

function stageWith(config = ON) {
  const clock = fakeClock();
  const registry = new Registry();
  const stage = createEgressStage(config, { registry, channel: null, now: clock.now });
  return { clock, registry, stage };
}

/** One sample of the registry's text (0 when absent). */
async function sample(registry: Registry, line: string): Promise<number> {
  const text = await registry.metrics();
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? Number.NaN : Number(found.slice(line.length + 1));
}

test('cache on: concurrent misses run one slow path, the others join it, the next CONNECT is a hit; /stats and metrics count each', async () => {
  const { clock, registry, stage } = stageWith();
  const answer = deferred<Resolution>();
  let slowPaths = 0;
  const slowPath = (): Promise<Resolution> => ((slowPaths += 1), answer.promise);
  const decisions = [1, 2, 3, 4, 5].map(() => stage.decider.decide(A, clock.now() + HOUR, slowPath));
  assert.equal(stage.cacheStats().inFlight, 1);
  answer.resolve({ verdict: ALLOW, cacheable: true });
  assert.deepEqual((await Promise.all(decisions)).map((d) => d.cache), ['miss', 'joined', 'joined', 'joined', 'joined']);
  const hit = await stage.decider.decide(A, clock.now() + HOUR, slowPath);
  assert.deepEqual(hit, { verdict: ALLOW, cache: 'hit', lease: { origin: 0, generation: 1, expiresAtMs: clock.now() + 5000 } }, 'a hit holds the entry that granted it');
  assert.equal(slowPaths, 1);
  const block = stage.stats().egress.cache;
  assert.equal(block.enabled, true);
  assert.deepEqual(
    { hits: block.hits, misses: block.misses, joined: block.joined, slowPaths: block.slowPaths, stored: block.stored, entries: block.entries, inFlight: block.inFlight, hitRatio: block.hitRatio },
    { hits: 1, misses: 5, joined: 4, slowPaths: 1, stored: 1, entries: 1, inFlight: 0, hitRatio: 0.1667 },
  );
  assert.equal(block.shared.enabled, false);
  assert.equal(await sample(registry, 'actor_edge_proxy_egress_cache_hits_total'), 1);
  assert.equal(await sample(registry, 'actor_edge_proxy_egress_cache_misses_total'), 5);
  assert.equal(await sample(registry, 'actor_edge_proxy_egress_cache_joined_total'), 4);
  assert.equal(await sample(registry, 'actor_edge_proxy_egress_cache_slow_paths_total'), 1);
  assert.equal(await sample(registry, 'actor_edge_proxy_egress_cache_stored_total'), 1);
  assert.equal(await sample(registry, 'actor_edge_proxy_egress_cache_entries'), 1);
});

test('cache on: a verdict that may not be cached is asked again every time and counted by its outcome; a denial is cached', async () => {
  const { clock, registry, stage } = stageWith();
  const unavailable = async (): Promise<Resolution> => ({ verdict: UNAVAILABLE, cacheable: false });
  assert.equal((await stage.decider.decide(A, clock.now() + HOUR, unavailable)).cache, 'miss');
  assert.equal((await stage.decider.decide(A, clock.now() + HOUR, unavailable)).cache, 'miss');
  const denied = async (): Promise<Resolution> => ({ verdict: DENY, cacheable: true });
  assert.equal((await stage.decider.decide(A, clock.now() + HOUR, denied)).cache, 'miss');
  assert.deepEqual(await stage.decider.decide(A, clock.now() + HOUR, denied), { verdict: DENY, cache: 'hit' });
  const block = stage.cacheStats();
  assert.equal(block.notCached.unavailable, 2);
  assert.equal(block.notCached.denied, 0);
  assert.equal(block.slowPaths, 3);
  assert.equal(await sample(registry, 'actor_edge_proxy_egress_cache_not_cached_total{outcome="unavailable"}'), 2);
  // A verdict whose certificate expired meanwhile is not stored: counted under its own outcome.
  const other = egressKey(digest('b'));
  await stage.decider.decide(other, clock.now(), async () => ({ verdict: ALLOW, cacheable: true }));
  assert.equal(stage.cacheStats().notCached.allowed, 1);
  await stage.decider.decide(egressKey(digest('c')), clock.now() + HOUR, async () => ({ verdict: { kind: 'deny', status: 403, body: 'x', outcome: 'made-up' }, cacheable: false }));
  assert.equal(stage.cacheStats().notCached.other, 1, 'an outcome outside the contract is counted as other');
});

test('cache on: a failing slow path fails every CONNECT that shared it, is counted, and caches nothing', async () => {
  const { clock, stage } = stageWith();
  const answer = deferred<Resolution>();
  const first = stage.decider.decide(A, clock.now() + HOUR, () => answer.promise);
  const second = stage.decider.decide(A, clock.now() + HOUR, () => answer.promise);
  answer.reject(new Error('ext_proc timeout'));
  await assert.rejects(first, /timeout/);
  await assert.rejects(second, /timeout/);
  const block = stage.cacheStats();
  assert.equal(block.failed, 1);
  assert.equal(block.joined, 1);
  assert.equal(block.entries, 0);
  assert.equal(block.inFlight, 0);
});

test('cache off: the slow path for every CONNECT, nothing stored, and the admin routes say the cache is off', async () => {
  const { clock, registry, stage } = stageWith({ ...ON, enabled: false });
  let slowPaths = 0;
  const slowPath = async (): Promise<Resolution> => ((slowPaths += 1), { verdict: ALLOW, cacheable: true });
  for (let i = 1; i <= 3; i++) {
    // Each allow gets a lease of its own, lasting the TTL (what its tunnels are re-validated within).
    assert.deepEqual(await stage.decider.decide(A, clock.now() + HOUR, slowPath), { verdict: ALLOW, cache: 'off', lease: { origin: 0, generation: i, expiresAtMs: clock.now() + 5000 } });
  }
  assert.equal(slowPaths, 3);
  assert.equal(stage.cache, undefined);
  const block = stage.cacheStats();
  assert.deepEqual(
    { enabled: block.enabled, slowPaths: block.slowPaths, hits: block.hits, misses: block.misses, stored: block.stored, entries: block.entries, hitRatio: block.hitRatio },
    { enabled: false, slowPaths: 3, hits: 0, misses: 0, stored: 0, entries: 0, hitRatio: null },
  );
  assert.equal(await sample(registry, 'actor_edge_proxy_egress_cache_slow_paths_total'), 3);
  assert.equal(await sample(registry, 'actor_edge_proxy_egress_cache_entries'), 0);
});

test('/stats/reset starts the block from zero; the metrics keep counting from the start', async () => {
  const { clock, registry, stage } = stageWith();
  const slowPath = async (): Promise<Resolution> => ({ verdict: ALLOW, cacheable: true });
  await stage.decider.decide(A, clock.now() + HOUR, slowPath);
  await stage.decider.decide(A, clock.now() + HOUR, slowPath);
  stage.resetStats();
  const block = stage.cacheStats();
  assert.deepEqual([block.hits, block.misses, block.slowPaths, block.stored, block.entries], [0, 0, 0, 0, 1]);
  assert.equal(await sample(registry, 'actor_edge_proxy_egress_cache_hits_total'), 1);
});

test('POST /egress/revoke: the actor\'s (or the certificate\'s) verdicts evicted and its grants told, with the cache on or off; one filter exactly', async () => {
  for (const enabled of [true, false]) {
    const { clock, stage } = stageWith({ ...ON, enabled });
    const revoked: unknown[] = [];
    stage.signals.attach({ verdict: () => undefined, holdsCertificate: () => true, revoke: (filter, reason) => (revoked.push({ filter, reason }), 3) });
    const allow = async (): Promise<Resolution> => ({ verdict: ALLOW, cacheable: true });
    await stage.decider.decide(A, clock.now() + HOUR, allow);
    await stage.decider.decide(egressKey(digest('a'), '127.0.0.1:9001'), clock.now() + HOUR, allow);
    await stage.decider.decide(egressKey(digest('b'), '127.0.0.1:9000', { atespace: 'demo', name: 'b' }), clock.now() + HOUR, allow);
    const app = Fastify();
    await app.register(stage.admin as NonNullable<typeof stage.admin>);
    try {
      const res = await app.inject({ method: 'POST', url: '/egress/revoke?actor=demo/a' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { actor: 'demo/a', evicted: enabled ? 2 : 0, tunnelsClosed: 3 });
      assert.deepEqual(revoked, [{ filter: { atespace: 'demo', name: 'a' }, reason: 'revoked-admin' }]);
      if (enabled) assert.equal(stage.cache?.size, 1, "another actor's verdict stays");
      const byCert = await app.inject({ method: 'POST', url: `/egress/revoke?cert=${digest('B')}` });
      assert.deepEqual(byCert.json(), { cert: digest('b'), evicted: enabled ? 1 : 0, tunnelsClosed: 3 });
      for (const url of ['/egress/revoke', '/egress/revoke?actor=demo', `/egress/revoke?actor=demo/a&cert=${digest('a')}`, '/egress/revoke?cert=xyz']) {
        const bad = await app.inject({ method: 'POST', url });
        assert.equal(bad.statusCode, 400, url);
        assert.equal((bad.json() as { code: string }).code, 'BAD_REQUEST');
      }
      assert.equal(revoked.length, 2, 'a bad request revokes nothing');
    } finally {
      await app.close();
    }
  }
});
