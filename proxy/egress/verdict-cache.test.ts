import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EgressVerdictCache, type EgressKey, type EgressVerdict, type Resolution, type VerdictFilter } from './verdict-cache.js';
import { ALLOW, deferred, DENY, digest, egressKey, fakeClock, UNAVAILABLE } from './testing/verdicts.js';

const TTL = 5000;
const A = egressKey(digest('a'));
const A2 = egressKey(digest('a'), '127.0.0.1:9001');
const B = egressKey(digest('b'), '127.0.0.1:9000', { atespace: 'demo', name: 'b' });
const C = egressKey(digest('c'), '127.0.0.1:9000', { atespace: 'other', name: 'a' });
const KEYS: Readonly<Record<string, EgressKey>> = { A, A2, B, C };

/** One step of a scenario: store (with the certificate's NotAfter `notAfterIn` ms from now), advance the clock, look up, evict. */
type Step =
  | readonly ['store', keyof typeof KEYS, EgressVerdict, number?]
  | readonly ['advance', number]
  | readonly ['hit', keyof typeof KEYS, EgressVerdict]
  | readonly ['miss', keyof typeof KEYS]
  | readonly ['evict', VerdictFilter, number];

interface Scenario {
  readonly name: string;
  readonly maxEntries?: number;
  readonly steps: readonly Step[];
  /** Counters at the end (only those named). */
  readonly counts?: Partial<{ hits: number; misses: number; stored: number; expired: number; lru: number; admin: number }>;
  readonly size?: number;
}

const SCENARIOS: readonly Scenario[] = [
  { name: 'a miss before anything is stored', steps: [['miss', 'A']], counts: { hits: 0, misses: 1 } },
  { name: 'a hit after a store, for that certificate and destination only', steps: [['store', 'A', ALLOW], ['hit', 'A', ALLOW], ['miss', 'A2'], ['miss', 'B']], counts: { hits: 1, misses: 2, stored: 1 } },
  { name: 'a denied verdict is cached like an allowed one', steps: [['store', 'A', DENY], ['hit', 'A', DENY]] },
  { name: 'expiry at the TTL: live until the last millisecond, a miss at it', steps: [['store', 'A', ALLOW], ['advance', TTL - 1], ['hit', 'A', ALLOW], ['advance', 1], ['miss', 'A']], counts: { expired: 1 }, size: 0 },
  { name: "a hit never extends an entry's life", steps: [['store', 'A', ALLOW], ['advance', 3000], ['hit', 'A', ALLOW], ['advance', 1999], ['hit', 'A', ALLOW], ['advance', 1], ['miss', 'A']] },
  { name: "expiry at the certificate's NotAfter when it comes before the TTL", steps: [['store', 'A', ALLOW, 1200], ['advance', 1199], ['hit', 'A', ALLOW], ['advance', 1], ['miss', 'A']], counts: { expired: 1 } },
  { name: 'a NotAfter after the TTL leaves the TTL in charge', steps: [['store', 'A', ALLOW, 60_000], ['advance', TTL], ['miss', 'A']] },
  { name: 'a certificate already expired stores nothing', steps: [['store', 'A', ALLOW, 0], ['miss', 'A'], ['store', 'A', ALLOW, -5], ['miss', 'A']], counts: { stored: 0 }, size: 0 },
  { name: 'a newer store replaces the verdict and its expiry', steps: [['store', 'A', DENY], ['advance', 4000], ['store', 'A', ALLOW], ['advance', 4000], ['hit', 'A', ALLOW]] },
  {
    name: 'bounded: the least recently used entry goes first',
    maxEntries: 2,
    steps: [['store', 'A', ALLOW], ['store', 'B', ALLOW], ['hit', 'A', ALLOW], ['store', 'C', DENY], ['miss', 'B'], ['hit', 'A', ALLOW], ['hit', 'C', DENY]],
    counts: { lru: 1 },
    size: 2,
  },
  {
    name: 'evict by actor: every certificate and destination of it, denied verdicts too',
    steps: [['store', 'A', ALLOW], ['store', 'A2', DENY], ['store', 'B', ALLOW], ['store', 'C', ALLOW], ['evict', { atespace: 'demo', name: 'a' }, 2], ['miss', 'A'], ['miss', 'A2'], ['hit', 'B', ALLOW], ['hit', 'C', ALLOW]],
    counts: { admin: 2 },
  },
  {
    name: 'evict by certificate',
    steps: [['store', 'A', ALLOW], ['store', 'A2', ALLOW], ['store', 'B', ALLOW], ['evict', { certDigest: digest('a') }, 2], ['miss', 'A'], ['miss', 'A2'], ['hit', 'B', ALLOW]],
  },
  { name: 'evict all', steps: [['store', 'A', ALLOW], ['store', 'B', DENY], ['evict', {}, 2], ['miss', 'A'], ['miss', 'B']], size: 0 },
  {
    name: 'an eviction counts live entries only: an expired one is counted as expired',
    steps: [['store', 'A', ALLOW, 100], ['store', 'B', ALLOW], ['advance', 100], ['evict', {}, 1]],
    counts: { admin: 1, expired: 1 },
  },
  { name: 'a store after an eviction is served again', steps: [['store', 'A', ALLOW], ['evict', { certDigest: digest('a') }, 1], ['store', 'A', DENY], ['hit', 'A', DENY]] },
];

test('the verdict cache, as a table of behaviours', () => {
  for (const s of SCENARIOS) {
    const clock = fakeClock();
    const cache = new EgressVerdictCache({ maxEntries: s.maxEntries ?? 100, ttlMs: TTL, now: clock.now });
    s.steps.forEach((step, i) => {
      const at = `${s.name}: step ${i + 1} (${step[0]})`;
      switch (step[0]) {
        case 'store': {
          const [, k, verdict, notAfterIn] = step;
          cache.store(KEYS[k] as EgressKey, verdict, clock.now() + (notAfterIn ?? 3_600_000));
          break;
        }
        case 'advance':
          clock.advance(step[1]);
          break;
        case 'hit': {
          const found = cache.lookup(KEYS[step[1]] as EgressKey);
          assert.equal(found.kind, 'hit', at);
          assert.equal(found.kind === 'hit' && found.entry.verdict, step[2], at);
          break;
        }
        case 'miss':
          assert.equal(cache.lookup(KEYS[step[1]] as EgressKey).kind, 'miss', at);
          break;
        case 'evict':
          assert.equal(cache.evict(step[1]), step[2], at);
          break;
      }
    });
    const stats = cache.stats();
    const { evictions, ...counts } = stats;
    const actual: Record<string, number> = { ...counts, lru: evictions.lru, admin: evictions.admin };
    for (const [name, n] of Object.entries(s.counts ?? {})) assert.equal(actual[name], n, `${s.name}: ${name}`);
    if (s.size !== undefined) assert.equal(cache.size, s.size, `${s.name}: size`);
  }
});

test('resolveOnce: concurrent misses share one resolution, and its verdict is cached for the next', async () => {
  const clock = fakeClock();
  const cache = new EgressVerdictCache({ maxEntries: 10, ttlMs: TTL, now: clock.now });
  const answer = deferred<Resolution>();
  let runs = 0;
  const resolve = (): Promise<Resolution> => {
    runs += 1;
    return answer.promise;
  };
  const calls = [1, 2, 3, 4, 5].map(() => cache.resolveOnce(A, clock.now() + 3_600_000, resolve));
  assert.equal(cache.inFlight, 1);
  answer.resolve({ verdict: ALLOW, cacheable: true });
  const results = await Promise.all(calls);
  assert.equal(runs, 1, 'one resolution for five concurrent misses');
  assert.deepEqual(results.map((r) => r.source), ['leader', 'joined', 'joined', 'joined', 'joined']);
  assert.ok(results.every((r) => r.verdict === ALLOW && r.stored));
  assert.equal(cache.inFlight, 0);
  assert.equal(cache.lookup(A).kind, 'hit');
  assert.equal(cache.stats().joined, 4);
  assert.equal(cache.stats().stored, 1);
});

test('resolveOnce: a failed resolution is handed to every caller that shared it, never cached, and the next miss resolves again', async () => {
  const cache = new EgressVerdictCache({ maxEntries: 10, ttlMs: TTL, now: fakeClock().now });
  const answer = deferred<Resolution>();
  let runs = 0;
  const resolve = (): Promise<Resolution> => {
    runs += 1;
    return answer.promise;
  };
  const leader = cache.resolveOnce(A, Infinity, resolve);
  const joined = cache.resolveOnce(A, Infinity, resolve);
  answer.reject(new Error('ext_proc stream reset'));
  await assert.rejects(leader, /stream reset/);
  await assert.rejects(joined, /stream reset/, 'the joiner gets the same failure');
  assert.equal(cache.lookup(A).kind, 'miss', 'nothing cached');
  assert.equal(cache.inFlight, 0);
  const again = await cache.resolveOnce(A, Infinity, async () => ((runs += 1), { verdict: DENY, cacheable: true }));
  assert.equal(again.source, 'leader');
  assert.equal(runs, 2);
  // A resolution that throws before it returns a promise fails the same way.
  await assert.rejects(
    cache.resolveOnce(B, Infinity, () => {
      throw new Error('no channel');
    }),
    /no channel/,
  );
});

test('resolveOnce: a verdict that is not cacheable is handed to its joiners but not stored', async () => {
  const cache = new EgressVerdictCache({ maxEntries: 10, ttlMs: TTL, now: fakeClock().now });
  const answer = deferred<Resolution>();
  const calls = [cache.resolveOnce(A, Infinity, () => answer.promise), cache.resolveOnce(A, Infinity, () => answer.promise)];
  answer.resolve({ verdict: UNAVAILABLE, cacheable: false });
  const [leader, joined] = await Promise.all(calls);
  assert.equal(leader?.verdict, UNAVAILABLE);
  assert.equal(joined?.verdict, UNAVAILABLE);
  assert.equal(leader?.stored, false);
  assert.equal(cache.lookup(A).kind, 'miss');
  assert.equal(cache.stats().stored, 0);
});

test('resolveOnce: an eviction that matches a key while its resolution is in flight keeps that resolution out of the cache', async () => {
  const cache = new EgressVerdictCache({ maxEntries: 10, ttlMs: TTL, now: fakeClock().now });
  const forA = deferred<Resolution>();
  const forB = deferred<Resolution>();
  const a = cache.resolveOnce(A, Infinity, () => forA.promise);
  const b = cache.resolveOnce(B, Infinity, () => forB.promise);
  assert.equal(cache.evict({ atespace: 'demo', name: 'a' }), 0, 'nothing stored yet');
  forA.resolve({ verdict: ALLOW, cacheable: true });
  forB.resolve({ verdict: ALLOW, cacheable: true });
  assert.equal((await a).stored, false, 'resolved before the eviction was made: not stored');
  assert.equal((await b).stored, true, 'another actor: stored');
  assert.equal(cache.lookup(A).kind, 'miss');
  assert.equal(cache.lookup(B).kind, 'hit');
});

test('resolveOnce: the certificate expiring while its resolution is in flight stores nothing', async () => {
  const clock = fakeClock();
  const cache = new EgressVerdictCache({ maxEntries: 10, ttlMs: TTL, now: clock.now });
  const answer = deferred<Resolution>();
  const call = cache.resolveOnce(A, clock.now() + 50, () => answer.promise);
  clock.advance(50);
  answer.resolve({ verdict: ALLOW, cacheable: true });
  const result = await call;
  assert.equal(result.verdict, ALLOW, 'the verdict is still the answer');
  assert.equal(result.stored, false);
});

test('entries() lists live verdicts, most recently used first, with the key and the actor', () => {
  const clock = fakeClock();
  const cache = new EgressVerdictCache({ maxEntries: 10, ttlMs: TTL, now: clock.now });
  cache.store(A, ALLOW, Infinity);
  cache.store(B, DENY, clock.now() + 10);
  cache.store(C, DENY, Infinity);
  cache.lookup(A);
  clock.advance(10);
  assert.deepEqual(
    cache.entries().map((e) => [e.key.certDigest[0], e.key.actor.name, e.entry.verdict.kind, e.entry.expiresAtMs - clock.now()]),
    [
      ['a', 'a', 'allow', TTL - 10],
      ['c', 'a', 'deny', TTL - 10],
    ],
  );
  assert.equal(cache.stats().expired, 1, 'B expired at its NotAfter and was swept');
});

test('options are checked', () => {
  assert.throws(() => new EgressVerdictCache({ maxEntries: 0, ttlMs: 1 }), RangeError);
  assert.throws(() => new EgressVerdictCache({ maxEntries: 1.5, ttlMs: 1 }), RangeError);
  assert.throws(() => new EgressVerdictCache({ maxEntries: 1, ttlMs: 0 }), RangeError);
});

/** The property's operations over six keys (three certificates of two actors, two destinations each). */
type Op =
  | { readonly op: 'store'; readonly k: number; readonly allow: boolean; readonly notAfterIn: number }
  | { readonly op: 'lookup'; readonly k: number }
  | { readonly op: 'evict'; readonly by: 'cert' | 'actor' | 'all'; readonly k: number }
  | { readonly op: 'advance'; readonly ms: number };

const PROPERTY_KEYS: readonly EgressKey[] = [0, 1, 2].flatMap((c) =>
  ['127.0.0.1:1', '[::1]:2'].map((d) => egressKey(digest('abc'[c] as string), d, { atespace: 'demo', name: c === 2 ? 'b' : 'a' })),
);

const OPS: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('store' as const), k: fc.nat(5), allow: fc.boolean(), notAfterIn: fc.integer({ min: -100, max: 12_000 }) }),
  fc.record({ op: fc.constant('lookup' as const), k: fc.nat(5) }),
  fc.record({ op: fc.constant('evict' as const), by: fc.constantFrom('cert' as const, 'actor' as const, 'all' as const), k: fc.nat(5) }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 7000 }) }),
);

test('property: under any sequence of stores, lookups, evictions and time, no verdict outlives min(ttl, NotAfter), an evicted one is never served, and the size stays bounded', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 6000 }), fc.array(OPS, { maxLength: 80 }), (maxEntries, ttlMs, ops) => {
      const clock = fakeClock();
      const cache = new EgressVerdictCache({ maxEntries, ttlMs, now: clock.now });
      /** What was stored last per key, and until when it may live; absent: never stored, or evicted since. */
      const model = new Map<string, { verdict: EgressVerdict; until: number }>();
      const id = (key: EgressKey): string => `${key.certDigest} ${key.destination}`;
      for (const o of ops) {
        const now = clock.now();
        if (o.op === 'store') {
          const key = PROPERTY_KEYS[o.k] as EgressKey;
          const verdict = o.allow ? ALLOW : DENY;
          const notAfter = now + o.notAfterIn;
          cache.store(key, verdict, notAfter);
          if (Math.min(now + ttlMs, notAfter) > now) model.set(id(key), { verdict, until: Math.min(now + ttlMs, notAfter) });
        } else if (o.op === 'lookup') {
          const key = PROPERTY_KEYS[o.k] as EgressKey;
          const found = cache.lookup(key);
          if (found.kind === 'hit') {
            const expected = model.get(id(key));
            assert.ok(expected !== undefined, 'a hit for a key never stored, or evicted');
            assert.equal(found.entry.verdict, expected.verdict, 'a hit serves the latest store');
            assert.ok(now < expected.until, 'a hit past min(ttl, NotAfter)');
          }
        } else if (o.op === 'evict') {
          const key = PROPERTY_KEYS[o.k] as EgressKey;
          const filter: VerdictFilter = o.by === 'cert' ? { certDigest: key.certDigest } : o.by === 'actor' ? key.actor : {};
          cache.evict(filter);
          for (const k of PROPERTY_KEYS) {
            const matches = o.by === 'all' || (o.by === 'cert' ? k.certDigest === key.certDigest : k.actor.name === key.actor.name && k.actor.atespace === key.actor.atespace);
            if (matches) model.delete(id(k));
          }
        } else {
          clock.advance(o.ms);
        }
        assert.ok(cache.size <= maxEntries, 'size above maxEntries');
        for (const { key, entry } of cache.entries()) {
          const expected = model.get(id(key));
          assert.ok(expected !== undefined, 'an entry for a key never stored, or evicted');
          assert.ok(clock.now() < entry.expiresAtMs && entry.expiresAtMs <= expected.until, 'an entry outlives min(ttl, NotAfter)');
        }
      }
    }),
    { seed: 4343, numRuns: 400 },
  );
});
