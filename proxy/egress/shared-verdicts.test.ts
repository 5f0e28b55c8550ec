import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EgressVerdictCache, type Resolution } from './verdict-cache.js';
import { EGRESS_VERDICT_MESSAGE, SharedVerdicts, type EgressVerdictMessage, type SharedVerdictEvent } from './shared-verdicts.js';
import { isSharedTableMessage } from '../cluster/shared-table-relay.js';
import { BINDING_MESSAGE } from '../stages/actor-cache/shared-bindings.js';
import { ALLOW, deferred, DENY, digest, egressKey, fakeClock } from './testing/verdicts.js';
import { memoryRelay } from '../../lib/testing/memory-relay.js';

const TTL = 5000;
const A = egressKey(digest('a'));
const B = egressKey(digest('b'), '127.0.0.1:9000', { atespace: 'demo', name: 'b' });

const hub = () => memoryRelay<EgressVerdictMessage>();

function pair() {
  const clock = fakeClock();
  const h = hub();
  const a = new EgressVerdictCache({ ttlMs: TTL, maxEntries: 100, now: clock.now });
  const b = new EgressVerdictCache({ ttlMs: TTL, maxEntries: 100, now: clock.now });
  const sa = new SharedVerdicts(a, h.channel(1));
  const sb = new SharedVerdicts(b, h.channel(2));
  return { clock, h, a, b, sa, sb };
}

test('a verdict stored in one process is a hit in the other, until it expires where it was stored', () => {
  const { clock, h, a, b, sb } = pair();
  a.store(A, ALLOW, clock.now() + 3000);
  assert.equal(b.lookup(A).kind, 'miss', 'nothing arrives before the relay delivers');
  h.flush();
  clock.advance(1000);
  const hit = b.lookup(A);
  assert.equal(hit.kind, 'hit');
  assert.deepEqual(hit.kind === 'hit' && hit.entry.verdict, ALLOW);
  assert.equal(hit.kind === 'hit' && hit.entry.origin, 1, 'named by the process that stored it');
  clock.advance(1999);
  assert.equal(b.lookup(A).kind, 'hit');
  clock.advance(1);
  assert.equal(b.lookup(A).kind, 'miss', "at the certificate's NotAfter, as in the origin");
  assert.deepEqual(sb.stats(), { sent: 0, received: 1, adopted: 1, ignored: 0, evictions: 0, dropped: 0 });
});

test('a verdict decided on the traffic crosses with its rules', () => {
  const { clock, h, a, b } = pair();
  const verdict = { kind: 'hostnames' as const, actorId: 'uid-a', atespace: 'demo', name: 'a', rules: [{ rule: 0, hostnames: ['api.example.com'] }] };
  a.store(A, verdict, clock.now() + 3000);
  h.flush();
  const hit = b.lookup(A);
  assert.deepEqual(hit.kind === 'hit' && hit.entry.verdict, verdict);
});

test("an admin eviction in one process is applied in the other, to the other's own verdicts too", () => {
  const { h, a, b, sa, sb } = pair();
  a.store(A, ALLOW, Infinity);
  b.store(egressKey(digest('a'), '127.0.0.1:9001'), DENY, Infinity); // the same actor, stored by the other process
  b.store(B, ALLOW, Infinity);
  h.flush();
  assert.equal(a.size, 3);
  assert.equal(a.evict({ atespace: 'demo', name: 'a' }), 2);
  h.flush();
  assert.equal(b.size, 1, 'only demo/b is left');
  assert.equal(b.lookup(B).kind, 'hit');
  assert.equal(b.stats().evictions.peer, 2);
  assert.equal(b.stats().evictions.admin, 0, 'an admin eviction counts as admin only where it was made');
  assert.deepEqual(sb.stats(), { sent: 2, received: 2, adopted: 1, ignored: 0, evictions: 1, dropped: 2 });
  assert.equal(sa.stats().sent, 2, 'a store and an eviction');
});

test('a late store never undoes a newer eviction that covers it; a newer store is adopted', () => {
  const clock = fakeClock();
  const cache = new EgressVerdictCache({ ttlMs: TTL, maxEntries: 100, now: clock.now });
  const handlers: ((m: EgressVerdictMessage) => void)[] = [];
  const shared = new SharedVerdicts(cache, { self: 3, send: () => {}, onMessage: (h) => (handlers.push(h), () => {}) });
  const deliver = (event: SharedVerdictEvent): void => handlers.forEach((h) => h({ type: EGRESS_VERDICT_MESSAGE, event }));
  type Stored = Extract<SharedVerdictEvent, { kind: 'stored' }>;
  const stored = (generation: number, verdict = ALLOW): Stored => ({ kind: 'stored', key: A, verdict, origin: 1, generation, expiresAtMs: clock.now() + 4000 });
  // Process 2 evicted demo/a having heard process 1 up to its generation 7; process 1's store 7 reaches us late.
  deliver({ kind: 'evicted', filter: { atespace: 'demo', name: 'a' }, origin: 2, upTo: [[2, 0], [1, 7]] });
  deliver(stored(7));
  assert.equal(cache.lookup(A).kind, 'miss', 'the store arrived after the eviction of its generation');
  deliver(stored(9, DENY));
  deliver(stored(8));
  const hit = cache.lookup(A);
  assert.deepEqual(hit.kind === 'hit' && hit.entry.verdict, DENY, 'a newer store is adopted; an older one of the same origin does not replace it');
  deliver({ ...stored(10), key: B });
  assert.equal(cache.lookup(B).kind, 'hit', 'another actor is not covered');
  deliver({ ...stored(11), expiresAtMs: clock.now() });
  assert.deepEqual(shared.stats(), { sent: 0, received: 6, adopted: 2, ignored: 3, evictions: 1, dropped: 0 });
  // The eviction is remembered for one TTL only: by then anything it covers has expired.
  clock.advance(TTL);
  deliver({ ...stored(7), key: egressKey(digest('a'), '127.0.0.1:9002'), expiresAtMs: clock.now() + 1000 });
  assert.equal(shared.stats().adopted, 3);
});

test('a verdict stored meanwhile, which the evicting process had not heard of, survives in every process alike', () => {
  const { h, a, b } = pair();
  a.store(A, ALLOW, Infinity); // queued, not yet delivered
  assert.equal(b.evict({}), 0);
  h.flush(); // b adopts a's store; a hears an eviction that did not know its verdict
  assert.equal(a.lookup(A).kind, 'hit');
  assert.equal(b.lookup(A).kind, 'hit');
});

test('an eviction heard from another process keeps a resolution in flight here out of the cache', async () => {
  const { h, a, b } = pair();
  const answer = deferred<Resolution>();
  const call = b.resolveOnce(A, Infinity, () => answer.promise);
  a.evict({ certDigest: A.certDigest });
  h.flush();
  answer.resolve({ verdict: ALLOW, cacheable: true });
  assert.equal((await call).stored, false);
  assert.equal(b.lookup(A).kind, 'miss');
});

test('expiry and the LRU bound stay local: nothing is sent for them', () => {
  const clock = fakeClock();
  const h = hub();
  const a = new EgressVerdictCache({ ttlMs: TTL, maxEntries: 1, now: clock.now });
  const b = new EgressVerdictCache({ ttlMs: TTL, maxEntries: 10, now: clock.now });
  new SharedVerdicts(a, h.channel(1));
  new SharedVerdicts(b, h.channel(2));
  a.store(A, ALLOW, Infinity);
  a.store(B, ALLOW, Infinity); // pushes A out of a
  h.flush();
  assert.equal(a.stats().evictions.lru, 1);
  assert.equal(b.lookup(A).kind, 'hit', 'the other process keeps its copy');
  clock.advance(TTL);
  assert.equal(a.lookup(B).kind, 'miss');
  assert.equal(h.queue.length, 0);
});

test('close() stops both directions', () => {
  const { h, a, b, sb } = pair();
  sb.close();
  a.store(A, ALLOW, Infinity);
  b.store(B, ALLOW, Infinity);
  h.flush();
  assert.equal(b.lookup(A).kind, 'miss');
  assert.equal(a.lookup(B).kind, 'miss');
});

test('the cluster relay passes on both shared tables, and nothing else', () => {
  assert.equal(isSharedTableMessage({ type: EGRESS_VERDICT_MESSAGE, event: {} }), true);
  assert.equal(isSharedTableMessage({ type: BINDING_MESSAGE, event: {} }), true);
  assert.equal(isSharedTableMessage({ type: 'actor-edge:listening' }), false);
  assert.equal(isSharedTableMessage(null), false);
});
