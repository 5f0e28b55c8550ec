import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { Filter, UpstreamOutcome } from '../../api/filter.js';
import type { ProxyRequest } from '../../request/context.js';
import { testRequest } from '../../testing/proxy-request.js';
import { CACHE_SLOT } from './request-state.js';
import { BindingCache } from './binding-cache.js';
import { cacheOutcome, createActorCacheFilter } from './filter.js';
import { MissFlights } from './miss-flights.js';
import { RefreshAhead } from './refresh-ahead.js';
import type { RevalidateRequest, Revalidator } from '../revalidator.js';

const SUFFIX = 'actors.resources.substrate.ate.dev';
const HOST = `counter.demo.${SUFFIX}`;
const log = pino({ level: 'silent' });

type FakeContext = ProxyRequest;

function context(authority = HOST, method = 'GET'): FakeContext {
  return testRequest(method, performance.now(), authority);
}

/** The live binding for `key` (no hit or miss counted; expired bindings are purged first, counted as `ttl`). */
function bindingOf(cache: BindingCache, key: string): { address: string; generation: number } | undefined {
  for (const [k, binding] of cache.bindings()) if (k === key) return binding;
  return undefined;
}

const RESPONSE: UpstreamOutcome = { kind: 'response', status: 200, headers: {} };

function setup(ttlMs = 60_000) {
  const cache = new BindingCache({ ttlMs, maxEntries: 100 });
  const filter = createActorCacheFilter({ cache, actorSuffix: SUFFIX });
  return { cache, filter };
}

/** Simulates the ext-proc filter routing a miss. */
function extprocRoutes(ctx: FakeContext, address = '127.0.1.1:8443'): void {
  if (ctx.route === undefined) ctx.route = { address, source: 'extproc' };
}

/** What the chain does before a re-run. */
function rerun(filter: ReturnType<typeof setup>['filter'], ctx: FakeContext, reason: 'stale' | 'connect' | 'reset'): void {
  filter.onRerun?.(ctx, reason);
  ctx.nextAttempt();
}

test('a miss continues untouched, then a response routed by ext_proc teaches the cache', () => {
  const { cache, filter } = setup();
  const ctx = context();
  assert.deepEqual(filter.onRequest?.(ctx), { kind: 'continue' });
  assert.equal(ctx.route, undefined);
  assert.equal(ctx.headers.has('x-ate-target-port'), false);
  extprocRoutes(ctx);
  filter.onUpstreamResponse?.(ctx, RESPONSE);
  assert.equal(cacheOutcome(ctx), 'miss');
  const b = bindingOf(cache, 'demo/counter');
  assert.equal(b?.address, '127.0.1.1:8443');
});

test('a hit routes to the cached address with its generation and the authority port', () => {
  const { cache, filter } = setup();
  const b = cache.learn('demo/counter', '127.0.1.9:8443')!;
  const ctx = context(`Counter.Demo.${SUFFIX}.:9090`);
  assert.deepEqual(filter.onRequest?.(ctx), { kind: 'continue' });
  assert.deepEqual(ctx.route, { address: '127.0.1.9:8443', source: 'cache', generation: b.generation });
  assert.equal(ctx.headers.get('x-ate-target-port'), '9090');
  filter.onUpstreamResponse?.(ctx, RESPONSE);
  assert.equal(cacheOutcome(ctx), 'hit');
  assert.equal(bindingOf(cache, 'demo/counter')?.generation, b.generation, 'a hit does not re-learn');
  const dflt = context();
  dflt.headers.set('x-ate-target-port', '9999'); // never trusted, even if a forged value got this far
  filter.onRequest?.(dflt);
  assert.equal(dflt.headers.get('x-ate-target-port'), '80');
  assert.deepEqual(dflt.headers.getAll('x-ate-target-port'), ['80']);
});

test('hosts that name no actor are left for ext-proc and never cached', () => {
  const { cache, filter } = setup();
  for (const host of ['example.com', `a.${SUFFIX}`, `UPPER_.demo.${SUFFIX}`, '[::1]:80', '']) {
    const ctx = context(host);
    assert.deepEqual(filter.onRequest?.(ctx), { kind: 'continue' });
    assert.equal(ctx.route, undefined);
    extprocRoutes(ctx);
    filter.onUpstreamResponse?.(ctx, RESPONSE);
    assert.equal(cacheOutcome(ctx), undefined);
  }
  assert.equal(cache.size, 0);
  assert.equal(cache.stats().misses, 0);
});

test('never learns from a stale answer, a failure, a timeout, a non-literal address, or a request that never reached the router', () => {
  const { cache, filter } = setup();
  const outcomes: UpstreamOutcome[] = [
    { kind: 'stale', status: 421 },
    { kind: 'connect-failed', code: 'ECONNREFUSED' },
    { kind: 'reset', requestWritten: false, code: 'ECONNRESET' },
    { kind: 'timeout' },
    { kind: 'cancelled' },
  ];
  for (const o of outcomes) {
    const ctx = context();
    filter.onRequest?.(ctx);
    extprocRoutes(ctx);
    filter.onUpstreamResponse?.(ctx, o);
  }
  const named = context();
  filter.onRequest?.(named);
  extprocRoutes(named, 'worker-1.internal:8443');
  filter.onUpstreamResponse?.(named, RESPONSE);
  // An immediate response from ext_proc: the request has no route. Even if an upstream-phase call reached the
  // filter with a response outcome (the chain does not make one: the router never ran), nothing is learned.
  const immediate = context();
  filter.onRequest?.(immediate);
  filter.onUpstreamResponse?.(immediate, { kind: 'response', status: 404, headers: {} });
  filter.onDone?.(immediate, { status: 404 });
  assert.equal(cache.size, 0);
  assert.equal(cache.stats().misses, 7, 'every request above looked the actor up once and missed');
});

test('an actor answer of any status (even its own 421 without the stale header) is learned', () => {
  const { cache, filter } = setup();
  const ctx = context();
  filter.onRequest?.(ctx);
  extprocRoutes(ctx);
  filter.onUpstreamResponse?.(ctx, { kind: 'response', status: 421, headers: {} });
  assert.equal(cache.size, 1);
});

test('the apiserver resolver teaches the cache like ext_proc does', () => {
  const { cache, filter } = setup();
  const ctx = context();
  filter.onRequest?.(ctx);
  ctx.route = { address: '127.0.1.4:8443', source: 'apiserver' };
  filter.onUpstreamResponse?.(ctx, RESPONSE);
  assert.equal(bindingOf(cache, 'demo/counter')?.address, '127.0.1.4:8443');
});

for (const [kind, outcome, reason] of [
  ['stale', { kind: 'stale', status: 421 }, 'stale'],
  ['connect failure', { kind: 'connect-failed', code: 'ECONNREFUSED' }, 'connect'],
  ['reset', { kind: 'reset', requestWritten: true, code: 'ECONNRESET' }, 'reset'],
] as const) {
  test(`a ${kind} on a hit evicts once (upstream phase and re-run), the re-run misses and re-learns`, () => {
    const { cache, filter } = setup();
    cache.learn('demo/counter', '127.0.1.1:8443');
    const ctx = context();
    filter.onRequest?.(ctx);
    assert.equal(ctx.route?.source, 'cache');
    filter.onUpstreamResponse?.(ctx, outcome);
    assert.equal(bindingOf(cache, 'demo/counter'), undefined, 'evicted in the upstream phase');
    rerun(filter, ctx, reason);
    assert.equal(cache.stats().evictions[reason], 1, 'counted once');
    filter.onRequest?.(ctx);
    assert.equal(ctx.route, undefined, 'the re-run misses');
    extprocRoutes(ctx, '127.0.1.2:8443');
    filter.onUpstreamResponse?.(ctx, RESPONSE);
    assert.equal(bindingOf(cache, 'demo/counter')?.address, '127.0.1.2:8443');
    assert.equal(cacheOutcome(ctx), 'rerun');
  });
}

test('a failure with no re-run still evicts', () => {
  const { cache, filter } = setup();
  cache.learn('demo/counter', '127.0.1.1:8443');
  const ctx = context('counter.demo.' + SUFFIX, 'POST');
  filter.onRequest?.(ctx);
  filter.onUpstreamResponse?.(ctx, { kind: 'reset', requestWritten: true, code: 'ECONNRESET' });
  assert.equal(cache.size, 0);
  assert.equal(cache.stats().evictions.reset, 1);
});

test('a client that went away evicts nothing: the binding stays', () => {
  const { cache, filter } = setup();
  cache.learn('demo/counter', '127.0.1.1:8443');
  const ctx = context();
  filter.onRequest?.(ctx);
  assert.equal(ctx.route?.source, 'cache');
  filter.onUpstreamResponse?.(ctx, { kind: 'cancelled' });
  assert.equal(bindingOf(cache, 'demo/counter')?.address, '127.0.1.1:8443');
  const e = cache.stats().evictions;
  assert.equal(e.stale + e.connect + e.reset, 0);
});

for (const reason of ['stale', 'connect', 'reset'] as const) {
  test(`onRerun alone evicts, counted as ${reason} (a chain that reports only through onRerun)`, () => {
    const { cache, filter } = setup();
    cache.learn('demo/counter', '127.0.1.1:8443');
    const ctx = context();
    filter.onRequest?.(ctx);
    rerun(filter, ctx, reason);
    assert.equal(cache.size, 0);
    assert.deepEqual(cache.stats().evictions, { stale: 0, connect: 0, reset: 0, identity: 0, worker: 0, ttl: 0, lru: 0, admin: 0, [reason]: 1 });
  });
}

test('a late stale answer for an old binding does not evict the newer binding', () => {
  const { cache, filter } = setup();
  cache.learn('demo/counter', '127.0.1.1:8443');
  const slow = context();
  filter.onRequest?.(slow); // routed with generation 1, the answer is slow to come
  const newer = cache.learn('demo/counter', '127.0.1.2:8443')!; // another request re-learned meanwhile
  filter.onUpstreamResponse?.(slow, { kind: 'stale', status: 421 });
  rerun(filter, slow, 'stale');
  assert.equal(bindingOf(cache, 'demo/counter')?.generation, newer.generation);
  assert.equal(cache.stats().evictions.stale, 0);
  filter.onRequest?.(slow);
  assert.equal(slow.route?.address, '127.0.1.2:8443', 'the re-run uses the newer binding');
});

test('a stale answer on the miss path evicts nothing and the re-run goes to ext-proc again', () => {
  const { cache, filter } = setup();
  const ctx = context();
  filter.onRequest?.(ctx);
  extprocRoutes(ctx);
  filter.onUpstreamResponse?.(ctx, { kind: 'stale', status: 421 });
  rerun(filter, ctx, 'stale');
  filter.onRequest?.(ctx);
  assert.equal(ctx.route, undefined);
  assert.equal(cache.stats().evictions.stale, 0);
  assert.equal(cacheOutcome(ctx), 'rerun');
});

test('a route set by an earlier filter is left alone', () => {
  const { cache, filter } = setup();
  cache.learn('demo/counter', '127.0.1.1:8443');
  const ctx = context();
  ctx.route = { address: '127.0.1.7:8443', source: 'extproc' };
  filter.onRequest?.(ctx);
  assert.equal(ctx.route.address, '127.0.1.7:8443');
  assert.equal(cache.stats().hits, 0);
});

test('a route that claims to come from the cache but was not looked up here teaches nothing', () => {
  const { cache, filter } = setup();
  const ctx = context();
  ctx.route = { address: '127.0.1.7:8443', source: 'cache' };
  filter.onRequest?.(ctx);
  filter.onUpstreamResponse?.(ctx, RESPONSE);
  assert.equal(cache.size, 0);
});

test('the filter is named actor-cache', () => {
  assert.equal(setup().filter.name, 'actor-cache');
});

test('a re-run that hits the cache is still reported as a re-run, also when no later filter step ran', () => {
  const { cache, filter } = setup();
  const ctx = context();
  filter.onRequest?.(ctx);
  extprocRoutes(ctx);
  filter.onUpstreamResponse?.(ctx, { kind: 'stale', status: 421 });
  filter.onRerun?.(ctx, 'stale');
  assert.equal(cacheOutcome(ctx), 'rerun', 'right after onRerun (a user filter may answer the re-run before this filter runs)');
  ctx.nextAttempt();
  const learned = cache.learn('demo/counter', '127.0.1.3:8443')!; // another request learned the new place meanwhile
  filter.onRequest?.(ctx);
  assert.deepEqual(ctx.route, { address: '127.0.1.3:8443', source: 'cache', generation: learned.generation });
  assert.equal(cacheOutcome(ctx), 'rerun');
});

test('an upstream outcome for an attempt this filter has not seen changes nothing', () => {
  const { cache, filter } = setup();
  const b = cache.learn('demo/counter', '127.0.1.1:8443')!;
  const ctx = context();
  filter.onRequest?.(ctx);
  ctx.nextAttempt(); // the chain moved on; this filter's request phase for attempt 1 has not run
  filter.onUpstreamResponse?.(ctx, { kind: 'stale', status: 421 });
  assert.equal(cache.current('demo/counter')?.generation, b.generation);
  ctx.route = { address: '127.0.1.5:8443', source: 'extproc' };
  filter.onUpstreamResponse?.(ctx, RESPONSE);
  assert.equal(cache.current('demo/counter')?.generation, b.generation);
});

test('hosts that name no actor pass the upstream and re-run phases untouched', () => {
  const { cache, filter } = setup();
  const ctx = context('example.com');
  filter.onRequest?.(ctx);
  filter.onUpstreamResponse?.(ctx, { kind: 'stale', status: 421 });
  filter.onRerun?.(ctx, 'stale');
  assert.equal(cacheOutcome(ctx), undefined);
  assert.equal(cache.stats().misses, 0);
});

test('expired bindings miss', () => {
  let now = 0;
  const cache = new BindingCache({ ttlMs: 100, maxEntries: 10, clock: { now: () => now } });
  const filter = createActorCacheFilter({ cache, actorSuffix: SUFFIX });
  cache.learn('demo/counter', '127.0.1.1:8443');
  now = 100;
  const ctx = context();
  filter.onRequest?.(ctx);
  assert.equal(ctx.route, undefined);
  assert.equal(cache.stats().evictions.ttl, 1);
});

test('many distinct authorities (the parse memo is bounded and refilled) still each name the right actor and port', () => {
  const { cache, filter } = setup();
  cache.learn('demo/counter', '127.0.1.9:8443');
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 1500; i++) {
      const junk = context(`junk-${i}.example.com`);
      filter.onRequest?.(junk);
      assert.equal(junk.route, undefined);
      if (i % 500 !== 0) continue;
      const ctx = context(`counter.demo.${SUFFIX}:${1000 + i}`);
      filter.onRequest?.(ctx);
      assert.equal(ctx.route?.address, '127.0.1.9:8443');
      assert.equal(ctx.headers.get('x-ate-target-port'), String(1000 + i));
    }
  }
});

// --- miss coalescing -------------------------------------------------------------------------------------------

function coalescing() {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 100 });
  const flights = new MissFlights({ waitTimeoutMs: 10_000 });
  const filter = createActorCacheFilter({ cache, actorSuffix: SUFFIX, flights });
  return { cache, flights, filter };
}

/** How the leader's attempt ends, as the chain reports it to the filter. */
const LEADER_ENDS: readonly { name: string; learns: boolean; end(f: Filter<ProxyRequest>, ctx: FakeContext): void }[] = [
  { name: 'answered (learned)', learns: true, end: (f, ctx) => (extprocRoutes(ctx), f.onUpstreamResponse?.(ctx, RESPONSE)) },
  { name: 'an ext_proc immediate response or error (no upstream, only onDone)', learns: false, end: (f, ctx) => f.onDone?.(ctx, { status: 503 }) },
  { name: 'a stale answer', learns: false, end: (f, ctx) => (extprocRoutes(ctx), f.onUpstreamResponse?.(ctx, { kind: 'stale', status: 421 })) },
  { name: 'a connect failure', learns: false, end: (f, ctx) => (extprocRoutes(ctx), f.onUpstreamResponse?.(ctx, { kind: 'connect-failed', code: 'ECONNREFUSED' })) },
  { name: 'a reset', learns: false, end: (f, ctx) => (extprocRoutes(ctx), f.onUpstreamResponse?.(ctx, { kind: 'reset', requestWritten: false, code: 'ECONNRESET' })) },
  { name: 'an upstream timeout', learns: false, end: (f, ctx) => (extprocRoutes(ctx), f.onUpstreamResponse?.(ctx, { kind: 'timeout' })) },
  { name: 'its client gone', learns: false, end: (f, ctx) => (extprocRoutes(ctx), f.onUpstreamResponse?.(ctx, { kind: 'cancelled' })) },
  { name: 'a re-run', learns: false, end: (f, ctx) => rerun(f as ReturnType<typeof setup>['filter'], ctx, 'connect') },
  { name: 'a non-literal route', learns: false, end: (f, ctx) => (extprocRoutes(ctx, 'worker-1:8443'), f.onUpstreamResponse?.(ctx, RESPONSE)) },
];

for (const row of LEADER_ENDS) {
  test(`coalescing: a leader that ends with ${row.name} → followers ${row.learns ? 'go as hits' : 'each run their own slow path'}`, async () => {
    const { cache, flights, filter } = coalescing();
    const leader = context();
    assert.deepEqual(filter.onRequest?.(leader), { kind: 'continue' }, 'the leader goes on at once');
    const followers = [context(), context(), context()];
    const waits = followers.map((f) => filter.onRequest?.(f));
    for (const w of waits) assert.ok(w instanceof Promise, 'followers wait');
    row.end(filter, leader);
    for (const w of waits) assert.deepEqual(await w, { kind: 'continue' });
    const learned = cache.current('demo/counter');
    for (const f of followers) {
      if (row.learns) {
        assert.deepEqual(f.route, { address: learned?.address, source: 'cache', generation: learned?.generation });
        assert.equal(f.headers.get('x-ate-target-port'), '80');
        assert.equal(cacheOutcome(f), 'coalesced');
      } else {
        assert.equal(f.route, undefined, 'no route: ext-proc resolves it');
        assert.equal(cacheOutcome(f), 'miss');
      }
    }
    assert.deepEqual(flights.stats(), row.learns ? { waits: 3, hit: 3, alone: 0, gone: 0 } : { waits: 3, hit: 0, alone: 3, gone: 0 });
    assert.equal(cache.stats().misses, 4, 'every request that found no binding is a miss');
    assert.equal(cache.stats().hits, 0, 'followers are counted as coalesced, not as hits');
    assert.equal(flights.size, 0);
  });
}

test('coalescing: followers sent on alone do not lead; the next miss leads a new flight and its own failure stays its own', async () => {
  const { flights, filter } = coalescing();
  const leader = context();
  filter.onRequest?.(leader);
  const follower = context();
  const wait = filter.onRequest?.(follower);
  filter.onDone?.(leader, { status: 504 });
  await wait;
  assert.equal(CACHE_SLOT.get(follower)?.leading, undefined);
  assert.equal(flights.size, 0);
  const next = context();
  filter.onRequest?.(next);
  assert.ok(CACHE_SLOT.get(next)?.leading, 'a new miss leads');
  // The follower running alone answers: it learns, but settles nothing of the new flight.
  extprocRoutes(follower);
  filter.onUpstreamResponse?.(follower, RESPONSE);
  assert.equal(flights.size, 1);
  filter.onDone?.(next, { status: 200 });
  assert.equal(flights.size, 0);
});

test('coalescing: a follower whose client leaves stops waiting; the others still get the binding', async () => {
  const { flights, filter } = coalescing();
  const leader = context();
  filter.onRequest?.(leader);
  const leaving = context();
  const staying = context();
  const w1 = filter.onRequest?.(leaving);
  const w2 = filter.onRequest?.(staying);
  leaving.abortFilters(); // the client leaves (the ingress aborts the request's signal)
  assert.deepEqual(await w1, { kind: 'continue' });
  assert.equal(leaving.route, undefined);
  extprocRoutes(leader);
  filter.onUpstreamResponse?.(leader, RESPONSE);
  await w2;
  assert.equal(staying.route?.source, 'cache');
  assert.deepEqual(flights.stats(), { waits: 2, hit: 1, alone: 0, gone: 1 });
});

test('coalescing: a re-run that misses joins a flight in progress too', async () => {
  const { cache, filter } = coalescing();
  cache.learn('demo/counter', '127.0.1.1:8443');
  const a = context();
  const b = context();
  filter.onRequest?.(a);
  filter.onRequest?.(b);
  filter.onUpstreamResponse?.(a, { kind: 'stale', status: 421 });
  rerun(filter, a, 'stale');
  filter.onUpstreamResponse?.(b, { kind: 'stale', status: 421 });
  rerun(filter, b, 'stale');
  assert.deepEqual(filter.onRequest?.(a), { kind: 'continue' }, 'a leads the re-run miss');
  const wait = filter.onRequest?.(b);
  assert.ok(wait instanceof Promise);
  extprocRoutes(a, '127.0.1.2:8443');
  filter.onUpstreamResponse?.(a, RESPONSE);
  await wait;
  assert.equal(b.route?.address, '127.0.1.2:8443');
  assert.equal(cacheOutcome(b), 'rerun');
});

// --- evict by worker -------------------------------------------------------------------------------------------

const W = '127.0.1.1:8443';

for (const row of [
  { name: 'a connect failure on a hit', outcome: { kind: 'connect-failed', code: 'ECONNREFUSED' }, hit: true, expect: { connect: 1, worker: 2 } },
  { name: 'a connect failure on a miss ext_proc routed', outcome: { kind: 'connect-failed', code: 'ETIMEDOUT' }, hit: false, expect: { connect: 0, worker: 2 } },
  { name: 'a reset (stays per actor)', outcome: { kind: 'reset', requestWritten: false, code: 'ECONNRESET' }, hit: true, expect: { reset: 1, worker: 0 } },
  { name: 'a stale answer (stays per actor)', outcome: { kind: 'stale', status: 421 }, hit: true, expect: { stale: 1, worker: 0 } },
] as const) {
  test(`evict by worker: ${row.name}`, () => {
    const { cache, filter } = setup();
    if (row.hit) cache.learn('demo/counter', W);
    cache.learn('demo/other', W);
    cache.learn('demo/third', W);
    cache.learn('demo/elsewhere', '127.0.1.2:8443');
    const ctx = context();
    filter.onRequest?.(ctx);
    extprocRoutes(ctx, W);
    const late = cache.learn('demo/late', W)!; // learned after this attempt began: survives
    filter.onUpstreamResponse?.(ctx, row.outcome);
    if (row.outcome.kind !== 'stale') rerun(filter, ctx, row.outcome.kind === 'reset' ? 'reset' : 'connect');
    const e = cache.stats().evictions;
    for (const [reason, n] of Object.entries(row.expect)) assert.equal(e[reason as keyof typeof e], n, reason);
    assert.equal(cache.current('demo/late')?.generation, late.generation);
    assert.equal(cache.current('demo/elsewhere')?.address, '127.0.1.2:8443');
    assert.equal(cache.current('demo/other') === undefined, row.expect.worker > 0);
  });
}

// --- refresh-ahead ---------------------------------------------------------------------------------------------

test('refresh-ahead: only a hit in the window starts one, with the authority the client used; misses and early hits never do', async () => {
  let now = 0;
  const cache = new BindingCache({ ttlMs: 1000, maxEntries: 10, refreshAheadFraction: 0.2, clock: { now: () => now } });
  const requests: RevalidateRequest[] = [];
  const revalidator: Revalidator = {
    revalidate: async (r) => (requests.push(r), { kind: 'routed', address: '127.0.1.1:8443' }),
  };
  const refresh = new RefreshAhead({ cache, revalidator, log });
  const filter = createActorCacheFilter({ cache, actorSuffix: SUFFIX, refresh });
  filter.onRequest?.(context(`counter.demo.${SUFFIX}:8080`)); // a miss
  cache.learn('demo/counter', '127.0.1.1:8443');
  now = 799;
  filter.onRequest?.(context(`counter.demo.${SUFFIX}:8080`));
  assert.equal(requests.length, 0, 'a hit before the window');
  now = 800;
  filter.onRequest?.(context(`counter.demo.${SUFFIX}:8080`));
  filter.onRequest?.(context(`counter.demo.${SUFFIX}:8080`));
  await refresh.idle();
  assert.deepEqual(requests, [{ authority: `counter.demo.${SUFFIX}:8080`, scheme: 'http' }]);
  assert.equal(cache.current('demo/counter')?.expiresAt, 2000);
  now = 1999;
  assert.equal(cache.lookup('demo/counter').kind, 'hit', 'renewed: still a hit past the first expiry');
});

test('refresh-ahead over several TTLs: an actor in use stays a hit, re-validated once per TTL; an idle actor just expires', async () => {
  const TTL_MS = 1000;
  let now = 0;
  const cache = new BindingCache({ ttlMs: TTL_MS, maxEntries: 10, refreshAheadFraction: 0.2, clock: { now: () => now } });
  const revalidations: { authority: string; at: number }[] = [];
  const revalidator: Revalidator = {
    revalidate: async (r) => (revalidations.push({ authority: r.authority, at: now }), { kind: 'routed', address: '127.0.1.1:8443' }),
  };
  const refresh = new RefreshAhead({ cache, revalidator, log });
  const filter = createActorCacheFilter({ cache, actorSuffix: SUFFIX, refresh });
  const [hot, idle] = [`hot.demo.${SUFFIX}`, `idle.demo.${SUFFIX}`];
  // Each actor's first request misses, and ext_proc's answer teaches the cache.
  for (const host of [hot, idle]) {
    const ctx = context(host);
    filter.onRequest?.(ctx);
    extprocRoutes(ctx);
    filter.onUpstreamResponse?.(ctx, RESPONSE);
    assert.equal(cacheOutcome(ctx), 'miss');
  }
  // The hot actor gets a request every 10 ms for three TTLs and more; the idle one none.
  let hits = 0;
  for (now = 10; now <= 3 * TTL_MS + 500; now += 10) {
    const ctx = context(hot);
    filter.onRequest?.(ctx);
    assert.equal(ctx.route?.source, 'cache', `a hit at ${now} ms`);
    filter.onUpstreamResponse?.(ctx, RESPONSE);
    assert.equal(cacheOutcome(ctx), 'hit');
    hits++;
    await refresh.idle();
  }
  // A renewal runs one TTL past the old expiry: every TTL, the first hit in the binding's last 20 % re-validates it.
  assert.deepEqual(revalidations, [800, 1800, 2800].map((at) => ({ authority: hot, at })), 'one re-validation per TTL');
  assert.deepEqual(refresh.stats(), { ok: 3, failed: 0 });
  assert.equal(bindingOf(cache, 'demo/idle'), undefined, 'the idle binding expired (the listing purges it)');
  assert.equal(bindingOf(cache, 'demo/hot')?.address, '127.0.1.1:8443');
  const s = cache.stats();
  assert.deepEqual([s.hits, s.misses, s.evictions.ttl], [hits, 2, 1], 'no miss after the first request of each actor; only the idle binding expired');
});
