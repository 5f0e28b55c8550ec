import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { HeaderMap, RequestContext, UpstreamOutcome } from '../../api/filter.js';
import { BindingCache } from './binding-cache.js';
import { cacheOutcome, createActorCacheFilter } from './filter.js';

const SUFFIX = 'actors.resources.substrate.ate.dev';
const HOST = `counter.demo.${SUFFIX}`;
const log = pino({ level: 'silent' });

function headerMap(): HeaderMap {
  const m = new Map<string, string[]>();
  return {
    get: (n) => m.get(n)?.[0],
    getAll: (n) => m.get(n) ?? [],
    has: (n) => m.has(n),
    set: (n, v) => void m.set(n, [v]),
    append: (n, v) => void m.set(n, [...(m.get(n) ?? []), v]),
    delete: (n) => void m.delete(n),
    *entries() {
      for (const [k, vs] of m) for (const v of vs) yield [k, v] as [string, string];
    },
  };
}

type FakeContext = RequestContext & { attempt: number };

function context(authority = HOST, method = 'GET'): FakeContext {
  return {
    requestId: 'r1',
    method,
    path: '/',
    authority,
    scheme: 'http',
    remoteAddress: '127.0.0.1',
    headers: headerMap(),
    attempt: 0,
    route: undefined,
    locals: new Map(),
    log,
  };
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
  ctx.route = undefined;
  ctx.attempt += 1;
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
  const b = cache.peek('demo/counter');
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
  assert.equal(cache.peek('demo/counter')?.generation, b.generation, 'a hit does not re-learn');
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
  assert.equal(cache.peek('demo/counter')?.address, '127.0.1.4:8443');
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
    assert.equal(cache.peek('demo/counter'), undefined, 'evicted in the upstream phase');
    rerun(filter, ctx, reason);
    assert.equal(cache.stats().evictions[reason], 1, 'counted once');
    filter.onRequest?.(ctx);
    assert.equal(ctx.route, undefined, 'the re-run misses');
    extprocRoutes(ctx, '127.0.1.2:8443');
    filter.onUpstreamResponse?.(ctx, RESPONSE);
    assert.equal(cache.peek('demo/counter')?.address, '127.0.1.2:8443');
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
  assert.equal(cache.peek('demo/counter')?.address, '127.0.1.1:8443');
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
    assert.deepEqual(cache.stats().evictions, { stale: 0, connect: 0, reset: 0, ttl: 0, lru: 0, admin: 0, [reason]: 1 });
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
  assert.equal(cache.peek('demo/counter')?.generation, newer.generation);
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
  ctx.route = undefined;
  ctx.attempt = 1;
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
  ctx.attempt = 1; // the chain moved on; this filter's request phase for attempt 1 has not run
  filter.onUpstreamResponse?.(ctx, { kind: 'stale', status: 421 });
  assert.equal(cache.peek('demo/counter')?.generation, b.generation);
  ctx.route = { address: '127.0.1.5:8443', source: 'extproc' };
  filter.onUpstreamResponse?.(ctx, RESPONSE);
  assert.equal(cache.peek('demo/counter')?.generation, b.generation);
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
