import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BindingCache, type BindingEvent } from './binding-cache.js';
import { SharedBindings, type BindingMessage } from './shared-bindings.js';
import { memoryRelay } from '../../../lib/testing/memory-relay.js';

function clock(start = 1000): { now(): number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

const hub = () => memoryRelay<BindingMessage>();

function pair() {
  const c = clock();
  const h = hub();
  const a = new BindingCache({ ttlMs: 5000, maxEntries: 100, clock: c });
  const b = new BindingCache({ ttlMs: 5000, maxEntries: 100, clock: c });
  const sa = new SharedBindings(a, h.channel(1));
  const sb = new SharedBindings(b, h.channel(2));
  return { c, h, a, b, sa, sb };
}

test('a binding learned in one process is a hit in the other, for the rest of its TTL only', () => {
  const { c, h, a, b, sb } = pair();
  a.learn('demo/x', '127.0.1.1:8443');
  assert.equal(b.lookup('demo/x').kind, 'miss', 'nothing arrives before the relay delivers');
  h.flush();
  c.advance(1000);
  const hit = b.lookup('demo/x');
  assert.equal(hit.kind, 'hit');
  assert.equal(hit.kind === 'hit' && hit.binding.address, '127.0.1.1:8443');
  assert.equal(hit.kind === 'hit' && hit.binding.expiresAt, 1000 + 5000, 'the adopted binding expires when the original does');
  assert.deepEqual(sb.stats(), { sent: 0, received: 1, adopted: 1, dropped: 0, ignored: 0 });
  c.advance(3999);
  assert.equal(b.lookup('demo/x').kind, 'hit');
  c.advance(1);
  assert.equal(b.lookup('demo/x').kind, 'miss');
});

test('a stale eviction of an adopted binding removes it in the process that learned it', () => {
  const { h, a, b, sa } = pair();
  a.learn('demo/x', '127.0.1.1:8443');
  h.flush();
  const used = b.lookup('demo/x');
  assert.ok(used.kind === 'hit');
  assert.equal(b.evict('demo/x', used.binding.generation, 'stale'), true);
  h.flush();
  assert.equal(a.lookup('demo/x').kind, 'miss');
  assert.equal(sa.stats().dropped, 1);
  assert.equal(a.stats().evictions.stale, 0, 'a dropped binding counts as an eviction only where it was evicted');
});

test('an eviction names its binding: a newer binding learned meanwhile survives it', () => {
  const { h, a, b } = pair();
  a.learn('demo/x', '127.0.1.1:8443');
  h.flush();
  const used = b.lookup('demo/x');
  assert.ok(used.kind === 'hit');
  b.evict('demo/x', used.binding.generation, 'stale'); // queued
  a.learn('demo/x', '127.0.1.2:8443'); // a newer binding in the origin, before the eviction arrives
  h.flush();
  const hit = a.lookup('demo/x');
  assert.equal(hit.kind === 'hit' && hit.binding.address, '127.0.1.2:8443');
  const other = b.lookup('demo/x');
  assert.equal(other.kind === 'hit' && other.binding.address, '127.0.1.2:8443', 'and the other process adopted it');
});

test('a late learn never undoes a newer evict of the same origin', () => {
  const c = clock();
  const cache = new BindingCache({ ttlMs: 5000, maxEntries: 100, clock: c });
  const handlers: ((m: BindingMessage) => void)[] = [];
  const shared = new SharedBindings(cache, { self: 3, send: () => {}, onMessage: (h) => (handlers.push(h), () => {}) });
  const deliver = (event: BindingEvent): void => handlers.forEach((h) => h({ type: 'actor-edge:binding', event }));
  deliver({ kind: 'evicted', key: 'demo/x', origin: 1, originGeneration: 7, reason: 'stale' });
  deliver({ kind: 'learned', key: 'demo/x', address: '127.0.1.1:8443', origin: 1, originGeneration: 7, ttlLeftMs: 4000 });
  assert.equal(cache.lookup('demo/x').kind, 'miss', 'the learn arrived after the evict of its generation');
  deliver({ kind: 'learned', key: 'demo/x', address: '127.0.1.2:8443', origin: 1, originGeneration: 9, ttlLeftMs: 4000 });
  deliver({ kind: 'learned', key: 'demo/x', address: '127.0.1.1:8443', origin: 1, originGeneration: 8, ttlLeftMs: 4000 });
  const hit = cache.lookup('demo/x');
  assert.equal(hit.kind === 'hit' && hit.binding.address, '127.0.1.2:8443', 'an older learn of the same origin does not replace a newer one');
  assert.deepEqual(shared.stats(), { sent: 0, received: 4, adopted: 1, dropped: 0, ignored: 3 });
});

test('a connect failure in one process evicts the worker\'s bindings everywhere; TTL and LRU evictions stay local', () => {
  const { c, h, a, b } = pair();
  a.learn('demo/x', '127.0.1.1:8443');
  a.learn('demo/y', '127.0.1.1:8443');
  h.flush();
  assert.equal(b.evictWorker('127.0.1.1:8443', b.generationMark()), 2);
  h.flush();
  assert.equal(a.size, 0);
  a.learn('demo/z', '127.0.1.3:8443');
  h.flush();
  c.advance(5000);
  assert.equal(a.lookup('demo/z').kind, 'miss'); // ttl: nothing sent
  assert.equal(h.queue.length, 0);
});

test('an adopted binding becomes due for a refresh only in the second half of the refresh window', () => {
  const c = clock();
  const h = hub();
  const a = new BindingCache({ ttlMs: 1000, maxEntries: 10, refreshAheadFraction: 0.2, clock: c });
  const b = new BindingCache({ ttlMs: 1000, maxEntries: 10, refreshAheadFraction: 0.2, clock: c });
  new SharedBindings(a, h.channel(1));
  new SharedBindings(b, h.channel(2));
  a.learn('demo/x', '127.0.1.1:8443');
  h.flush();
  c.advance(850);
  const origin = a.lookup('demo/x');
  const adopted = b.lookup('demo/x');
  assert.equal(origin.kind === 'hit' && origin.refreshDue, true);
  assert.equal(adopted.kind === 'hit' && adopted.refreshDue, false);
  c.advance(60);
  const later = b.lookup('demo/x');
  assert.equal(later.kind === 'hit' && later.refreshDue, true, 'the origin had no traffic: the adopter refreshes');
  // The origin's renewal replaces the adopted copy, one TTL past the old expiry.
  assert.ok(origin.kind === 'hit' && a.claimRefresh('demo/x', origin.binding.generation));
  assert.ok(origin.kind === 'hit' && a.renew('demo/x', origin.binding.generation, '127.0.1.1:8443'));
  h.flush();
  const renewed = b.lookup('demo/x');
  assert.equal(renewed.kind === 'hit' && renewed.binding.expiresAt, 1000 + 2000);
  assert.equal(renewed.kind === 'hit' && renewed.refreshDue, false);
});
