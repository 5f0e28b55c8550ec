import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BindingCache, hostOfAddress, isLiteralAddress, onWorker, type BindingEvent } from './binding-cache.js';

function clock(start = 1000): { now(): number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

test('a learned binding is a hit until its TTL passes, then a miss counted as a ttl eviction', () => {
  const c = clock();
  const cache = new BindingCache({ ttlMs: 5000, maxEntries: 10, clock: c });
  assert.equal(cache.lookup('demo/a').kind, 'miss');
  const b = cache.learn('demo/a', '127.0.1.1:8443');
  assert.ok(b);
  c.advance(4999);
  const hit = cache.lookup('demo/a');
  assert.equal(hit.kind, 'hit');
  assert.equal(hit.kind === 'hit' && hit.binding.address, '127.0.1.1:8443');
  c.advance(1);
  assert.equal(cache.lookup('demo/a').kind, 'miss');
  const s = cache.stats();
  assert.equal(s.hits, 1);
  assert.equal(s.misses, 2);
  assert.equal(s.entries, 0);
  assert.equal(s.evictions.ttl, 1);
});

test('hits do not extend the TTL', () => {
  const c = clock();
  const cache = new BindingCache({ ttlMs: 100, maxEntries: 10, clock: c });
  cache.learn('demo/a', '127.0.1.1:8443');
  for (let i = 0; i < 9; i++) {
    c.advance(10);
    assert.equal(cache.lookup('demo/a').kind, 'hit');
  }
  c.advance(10);
  assert.equal(cache.lookup('demo/a').kind, 'miss');
});

test('the LRU bound evicts the least recently used binding and counts it as lru', () => {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 2, clock: clock() });
  cache.learn('demo/a', '127.0.1.1:8443');
  cache.learn('demo/b', '127.0.1.2:8443');
  assert.equal(cache.lookup('demo/a').kind, 'hit'); // a is now more recent than b
  cache.learn('demo/c', '127.0.1.3:8443');
  assert.equal(cache.lookup('demo/b').kind, 'miss');
  assert.equal(cache.lookup('demo/a').kind, 'hit');
  assert.equal(cache.lookup('demo/c').kind, 'hit');
  assert.equal(cache.stats().evictions.lru, 1);
  assert.equal(cache.stats().entries, 2);
});

test('eviction is generation-guarded: a late eviction of an old binding leaves the newer one', () => {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 10, clock: clock() });
  const old = cache.learn('demo/a', '127.0.1.1:8443')!;
  const newer = cache.learn('demo/a', '127.0.1.2:8443')!;
  assert.ok(newer.generation > old.generation);
  assert.equal(cache.evict('demo/a', old.generation, 'stale'), false);
  const hit = cache.lookup('demo/a');
  assert.equal(hit.kind === 'hit' && hit.binding.address, '127.0.1.2:8443');
  assert.equal(cache.stats().evictions.stale, 0);
  assert.equal(cache.evict('demo/a', newer.generation, 'stale'), true);
  assert.equal(cache.evict('demo/a', newer.generation, 'stale'), false, 'evicting twice counts once');
  assert.equal(cache.lookup('demo/a').kind, 'miss');
  assert.deepEqual(cache.stats().evictions, { stale: 1, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 });
});

test('evictions are counted by the reason given', () => {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 10, clock: clock() });
  const a = cache.learn('demo/a', '127.0.1.1:8443')!;
  const b = cache.learn('demo/b', '127.0.1.1:8443')!;
  cache.learn('demo/c', '127.0.1.1:8443');
  cache.learn('demo/d', '127.0.1.1:8443');
  cache.evict('demo/a', a.generation, 'connect');
  cache.evict('demo/b', b.generation, 'reset');
  assert.equal(cache.remove('demo/c'), true);
  assert.equal(cache.remove('demo/c'), false);
  assert.equal(cache.clear(), 1);
  assert.deepEqual(cache.stats().evictions, { stale: 0, connect: 1, reset: 1, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 2 });
  assert.equal(cache.size, 0);
});

test('only literal ip:port addresses are learned', () => {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 10, clock: clock() });
  for (const bad of ['worker-1:8443', 'localhost:80', '127.0.0.1', '127.0.0.1:0', '127.0.0.1:70000', '::1:80', '[::1]', '', '1.2.3:80']) {
    assert.equal(cache.learn('demo/a', bad), undefined, bad);
  }
  assert.equal(cache.size, 0);
  assert.ok(cache.learn('demo/a', '[::1]:8443'));
  assert.ok(isLiteralAddress('10.0.0.7:443'));
  assert.ok(!isLiteralAddress('[fe80::1%eth0]:443'));
});

test('a TTL of 0 stores nothing', () => {
  const cache = new BindingCache({ ttlMs: 0, maxEntries: 10, clock: clock() });
  assert.equal(cache.learn('demo/a', '127.0.1.1:8443'), undefined);
  assert.equal(cache.lookup('demo/a').kind, 'miss');
});

test('bindings() are the live bindings, most recent first, and leave hits, misses and the LRU order as they were', () => {
  const c = clock();
  const cache = new BindingCache({ ttlMs: 1000, maxEntries: 100, clock: c });
  for (let i = 0; i < 10; i++) cache.learn(`demo/a${i}`, `127.0.1.${i + 1}:8443`);
  c.advance(250);
  const listed = [...cache.bindings()];
  assert.deepEqual(
    listed.slice(0, 3).map(([key]) => key),
    ['demo/a9', 'demo/a8', 'demo/a7'],
  );
  assert.equal(listed.length, 10);
  assert.equal(listed[0]?.[1].expiresAt, c.now() + 750);
  assert.equal(cache.peek('demo/a0')?.address, '127.0.1.1:8443');
  assert.equal([...cache.bindings()][0]?.[0], 'demo/a9', 'peek moves nothing');
  assert.deepEqual({ hits: cache.stats().hits, misses: cache.stats().misses }, { hits: 0, misses: 0 });
  c.advance(1000);
  assert.equal(cache.peek('demo/a0'), undefined);
  assert.deepEqual([...cache.bindings()], []);
  assert.equal(cache.stats().evictions.ttl, 10);
});

test('resetStats zeros the /stats counters but keeps the bindings and the lifetime counters', () => {
  const cache = new BindingCache({ ttlMs: 1000, maxEntries: 100, clock: clock() });
  const b = cache.learn('demo/a', '127.0.1.1:8443')!;
  cache.lookup('demo/a');
  cache.lookup('demo/b');
  cache.resetStats();
  assert.deepEqual(cache.stats(), { hits: 0, misses: 0, entries: 1, evictions: { stale: 0, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 } });
  cache.evict('demo/a', b.generation, 'stale');
  cache.lookup('demo/a');
  assert.deepEqual(cache.stats(), { hits: 0, misses: 1, entries: 0, evictions: { stale: 1, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 } });
  assert.deepEqual(cache.lifetimeStats(), { hits: 1, misses: 2, entries: 0, evictions: { stale: 1, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 } });
});

test('current() reads a live binding without counting a hit or a miss', () => {
  const c = clock();
  const cache = new BindingCache({ ttlMs: 100, maxEntries: 10, clock: c });
  assert.equal(cache.current('demo/a'), undefined);
  const b = cache.learn('demo/a', '127.0.1.1:8443')!;
  assert.equal(cache.current('demo/a')?.generation, b.generation);
  c.advance(100);
  assert.equal(cache.current('demo/a'), undefined);
  assert.deepEqual([cache.stats().hits, cache.stats().misses, cache.stats().evictions.ttl], [0, 0, 1]);
});

// Evict by worker: which bindings a connect failure to 127.0.1.1:8443 removes, given the mark its attempt took.
for (const row of [
  { name: 'every binding to the worker learned before the mark', learnedAfterMark: [], expect: ['demo/c'] },
  { name: 'a binding learned after the mark survives', learnedAfterMark: ['demo/b'], expect: ['demo/b', 'demo/c'] },
  { name: 'a re-learned binding to the same worker after the mark survives', learnedAfterMark: ['demo/a'], expect: ['demo/a', 'demo/c'] },
] as const) {
  test(`evictWorker: ${row.name}; other workers' bindings stay`, () => {
    const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 10, clock: clock() });
    cache.learn('demo/a', '127.0.1.1:8443');
    cache.learn('demo/b', '127.0.1.1:8443');
    cache.learn('demo/c', '127.0.1.2:8443');
    const mark = cache.generationMark();
    for (const key of row.learnedAfterMark) cache.learn(key, '127.0.1.1:8443');
    const evicted = cache.evictWorker('127.0.1.1:8443', mark);
    const left = [...cache.bindings()].map(([key]) => key).sort();
    assert.deepEqual(left, [...row.expect]);
    assert.equal(evicted, 2 - row.learnedAfterMark.length);
    assert.equal(cache.stats().evictions.worker, evicted);
    assert.equal(cache.evictWorker('127.0.1.1:8443', mark), 0, 'a second failure finds nothing more to evict');
    assert.equal(cache.evictWorker('127.0.1.9:8443', Infinity), 0, 'an address with no bindings');
  });
}

test('evictWorker counts an already expired binding as ttl, not worker', () => {
  const c = clock();
  const cache = new BindingCache({ ttlMs: 100, maxEntries: 10, clock: c });
  cache.learn('demo/a', '127.0.1.1:8443');
  c.advance(100);
  assert.equal(cache.evictWorker('127.0.1.1:8443', cache.generationMark()), 0);
  assert.deepEqual([cache.stats().evictions.worker, cache.stats().evictions.ttl], [0, 1]);
});

test('the address index follows every way a binding leaves (replace, evict, lru, ttl, admin) and stays bounded', () => {
  const c = clock();
  const cache = new BindingCache({ ttlMs: 1000, maxEntries: 3, clock: c });
  const a = cache.learn('demo/a', '127.0.1.1:8443')!;
  cache.learn('demo/a', '127.0.1.2:8443'); // moved: no longer indexed under .1
  assert.equal(cache.evictWorker('127.0.1.1:8443', Infinity), 0);
  assert.equal(cache.evict('demo/a', a.generation, 'stale'), false);
  for (let i = 0; i < 50; i++) cache.learn(`demo/x${i}`, `127.0.2.${i + 1}:8443`); // lru pushes out all but 3
  assert.equal(cache.workerAddresses, 3);
  c.advance(1001); // lru-cache purges strictly after the TTL
  assert.equal(cache.size, 0);
  assert.equal(cache.workerAddresses, 0, 'expired bindings leave the index');
  cache.learn('demo/b', '127.0.1.3:8443');
  cache.clear();
  assert.equal(cache.workerAddresses, 0);
  const d = cache.learn('demo/d', '127.0.1.4:8443')!;
  cache.evict('demo/d', d.generation, 'reset');
  cache.learn('demo/e', '127.0.1.4:8443');
  cache.remove('demo/e');
  assert.equal(cache.workerAddresses, 0);
});

test('refresh-ahead bookkeeping: due only in the window and only until claimed; renew extends by one TTL; failure never retries', () => {
  const c = clock(0);
  const cache = new BindingCache({ ttlMs: 1000, maxEntries: 10, refreshAheadFraction: 0.2, clock: c });
  assert.equal(cache.refreshWindowMs, 200);
  const b = cache.learn('demo/a', '127.0.1.1:8443')!;
  const at = (ms: number): boolean => {
    c.advance(ms);
    const l = cache.lookup('demo/a');
    return l.kind === 'hit' && l.refreshDue;
  };
  assert.equal(at(799), false, 'before the last 20 %');
  assert.equal(at(1), true, 'from the last 20 % on');
  assert.equal(cache.claimRefresh('demo/a', b.generation + 1), false, 'only the generation the hit saw');
  assert.equal(cache.claimRefresh('demo/a', b.generation), true);
  assert.equal(cache.claimRefresh('demo/a', b.generation), false, 'one claim per binding');
  assert.equal(at(0), false, 'not due while its refresh is in flight');
  const renewed = cache.renew('demo/a', b.generation, '127.0.1.2:8443')!;
  assert.ok(renewed.generation > b.generation);
  assert.deepEqual([renewed.address, renewed.learnedAt, renewed.expiresAt, renewed.hits], ['127.0.1.2:8443', 800, 2000, 0]);
  assert.equal(cache.renew('demo/a', b.generation, '127.0.1.2:8443'), undefined, 'the old generation renews nothing');
  assert.equal(at(999), false);
  assert.equal(at(1), true, 'due again one TTL after the first window opened');
  assert.ok(cache.claimRefresh('demo/a', renewed.generation));
  cache.refreshFailed('demo/a', renewed.generation);
  assert.equal(at(0), false, 'a failed refresh is not retried');
  assert.equal(at(199), false);
  c.advance(1);
  assert.equal(cache.lookup('demo/a').kind, 'miss', 'and the binding expires normally');
});

test('renew refuses an expired binding, a non-literal address, and refreshes are never due without a fraction', () => {
  const c = clock(0);
  const cache = new BindingCache({ ttlMs: 1000, maxEntries: 10, refreshAheadFraction: 0.2, clock: c });
  const b = cache.learn('demo/a', '127.0.1.1:8443')!;
  assert.equal(cache.renew('demo/a', b.generation, 'worker-1:8443'), undefined);
  c.advance(1000);
  assert.equal(cache.claimRefresh('demo/a', b.generation), false);
  assert.equal(cache.renew('demo/a', b.generation, '127.0.1.1:8443'), undefined);
  const plain = new BindingCache({ ttlMs: 1000, maxEntries: 10, clock: c });
  plain.learn('demo/a', '127.0.1.1:8443');
  c.advance(999);
  const l = plain.lookup('demo/a');
  assert.ok(l.kind === 'hit' && !l.refreshDue);
  assert.throws(() => new BindingCache({ ttlMs: 1, maxEntries: 1, refreshAheadFraction: 1 }), RangeError);
});

test('the bounds are checked when the cache is made', () => {
  for (const maxEntries of [0, -1, 1.5, Number.NaN]) {
    assert.throws(() => new BindingCache({ ttlMs: 1000, maxEntries }), /maxEntries must be a positive integer/, String(maxEntries));
  }
  for (const ttlMs of [-1, Number.NaN]) assert.throws(() => new BindingCache({ ttlMs, maxEntries: 1 }), /ttlMs must be >= 0/, String(ttlMs));
  assert.equal(new BindingCache({ ttlMs: 0, maxEntries: 1 }).maxEntries, 1);
});

test('an expired binding is gone from current(), size and dump too, counted once as ttl, even after hits', () => {
  const c = clock();
  const cache = new BindingCache({ ttlMs: 100, maxEntries: 10, clock: c });
  cache.learn('demo/a', '127.0.1.1:8443');
  c.advance(50);
  assert.equal(cache.lookup('demo/a').kind, 'hit');
  assert.equal(cache.current('demo/a')?.address, '127.0.1.1:8443');
  c.advance(51);
  assert.equal(cache.current('demo/a'), undefined);
  assert.equal(cache.size, 0);
  assert.deepEqual([...cache.bindings()], []);
  assert.deepEqual(cache.stats().evictions, { stale: 0, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 1, lru: 0, admin: 0 });
});

test('a stale or failed answer for a binding that expired meanwhile is counted under its own reason, not ttl', () => {
  const c = clock();
  const cache = new BindingCache({ ttlMs: 100, maxEntries: 10, clock: c });
  const b = cache.learn('demo/a', '127.0.1.1:8443')!;
  assert.equal(cache.lookup('demo/a').kind, 'hit');
  c.advance(150); // the request was routed before the TTL ran out; its answer comes after
  assert.equal(cache.evict('demo/a', b.generation, 'stale'), true);
  assert.equal(cache.size, 0);
  assert.deepEqual(cache.stats().evictions, { stale: 1, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 });
});

test('after resetStats every /stats counter starts from zero again, evictions included', () => {
  const cache = new BindingCache({ ttlMs: 1000, maxEntries: 100, clock: clock() });
  for (const reason of ['stale', 'connect', 'reset', 'admin'] as const) {
    const b = cache.learn(`demo/${reason}`, '127.0.1.1:8443')!;
    cache.evict(`demo/${reason}`, b.generation, reason);
  }
  cache.resetStats();
  assert.deepEqual(cache.stats().evictions, { stale: 0, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 });
  const b = cache.learn('demo/x', '127.0.1.1:8443')!;
  cache.evict('demo/x', b.generation, 'connect');
  assert.deepEqual(cache.stats().evictions, { stale: 0, connect: 1, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0 });
  assert.deepEqual(cache.lifetimeStats().evictions, { stale: 1, connect: 2, reset: 1, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 1 });
});

test('a worker is named by its IP (any port) or by its exact ip:port; IPv6 with or without brackets', () => {
  assert.equal(hostOfAddress('127.0.1.1:8443'), '127.0.1.1');
  assert.equal(hostOfAddress('[fd00::1]:8443'), 'fd00::1');
  assert.equal(onWorker('127.0.1.1:8443', '127.0.1.1'), true);
  assert.equal(onWorker('127.0.1.10:8443', '127.0.1.1'), false);
  assert.equal(onWorker('127.0.1.1:8443', '127.0.1.1:9443'), false);
  assert.equal(onWorker('[fd00::1]:8443', 'fd00::1'), true);
  assert.equal(onWorker('[fd00::1]:8443', '[FD00::1]'), true);
  assert.equal(onWorker('[fd00::1]:8443', '[fd00::1]:8443'), true);
});

test('removeWorker takes every live binding on the worker, counts each under the reason given, and tells no other process', () => {
  const c = clock();
  const cache = new BindingCache({ ttlMs: 1000, maxEntries: 100, clock: c });
  const heard: BindingEvent[] = [];
  cache.learn('demo/old', '127.0.1.1:8443');
  c.advance(600);
  cache.learn('demo/a', '127.0.1.1:8443');
  cache.learn('demo/b', '127.0.1.1:8443');
  cache.learn('demo/c', '127.0.1.2:8443');
  cache.subscribe((e) => heard.push(e));
  c.advance(500); // demo/old has expired: a ttl eviction, not the worker's
  assert.equal(cache.removeWorker('127.0.1.1'), 2);
  assert.deepEqual([...cache.bindings()].map(([key]) => key), ['demo/c']);
  assert.equal(cache.workerAddresses, 1, 'the address index forgets the worker');
  assert.deepEqual(cache.stats().evictions, { stale: 0, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 1, lru: 0, admin: 2 });
  assert.deepEqual(heard, [], 'admin evictions stay in this process (the admin call reaches every process)');
  assert.equal(cache.lookup('demo/a').kind, 'miss');
});
