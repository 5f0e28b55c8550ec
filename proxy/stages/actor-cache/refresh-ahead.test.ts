import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { RevalidateRequest, Revalidation, Revalidator } from '../revalidator.js';
import { BindingCache, type Binding } from './binding-cache.js';
import { RefreshAhead } from './refresh-ahead.js';

const log = pino({ level: 'silent' });

/** A revalidator whose answers the test hands out one by one. */
function scripted() {
  const calls: { request: RevalidateRequest; answer: (r: Revalidation | Error) => void; signal: AbortSignal }[] = [];
  const revalidator: Revalidator = {
    revalidate: (request, signal) =>
      new Promise<Revalidation>((resolve, reject) => {
        calls.push({ request, signal, answer: (r) => (r instanceof Error ? reject(r) : resolve(r)) });
        signal.addEventListener('abort', () => resolve({ kind: 'failed', reason: 'aborted' }), { once: true });
      }),
  };
  return { calls, revalidator };
}

function setup(maxInFlight?: number) {
  let now = 0;
  const clock = { now: () => now, set: (t: number) => void (now = t) };
  const cache = new BindingCache({ ttlMs: 1000, maxEntries: 10, refreshAheadFraction: 0.2, clock });
  const s = scripted();
  const refresh = new RefreshAhead({ cache, revalidator: s.revalidator, log, ...(maxInFlight ? { maxInFlight } : {}) });
  return { cache, refresh, clock, ...s };
}

function dueHit(cache: BindingCache, key: string): Binding {
  const l = cache.lookup(key);
  assert.ok(l.kind === 'hit' && l.refreshDue, `${key} is due`);
  return l.binding;
}

test('one refresh per actor at a time; success renews the binding from the answer', async () => {
  const { cache, refresh, clock, calls } = setup();
  cache.learn('demo/a', '127.0.1.1:8443');
  clock.set(850);
  const b = dueHit(cache, 'demo/a');
  refresh.start('demo/a', b, 'a.demo.actors.example:8080', 'http');
  refresh.start('demo/a', b, 'a.demo.actors.example:8080', 'http');
  assert.equal(calls.length, 1, 'a second due hit starts nothing');
  assert.deepEqual(calls[0]?.request, { authority: 'a.demo.actors.example:8080', scheme: 'http' });
  assert.equal(refresh.isRefreshing('demo/a'), true);
  assert.equal(cache.peek('demo/a')?.refresh, 'in-flight');
  calls[0]?.answer({ kind: 'routed', address: '127.0.1.1:8443' });
  await refresh.idle();
  const now = cache.current('demo/a')!;
  assert.ok(now.generation > b.generation);
  assert.equal(now.expiresAt, 2000);
  assert.deepEqual(refresh.stats(), { ok: 1, failed: 0 });
  assert.equal(refresh.inFlight, 0);
});

// What a refresh's end does to the binding.
for (const row of [
  { name: 'a failed re-validation', answer: { kind: 'failed', reason: 'immediate response 503' } as Revalidation },
  { name: 'a rejected re-validation', answer: new Error('boom') },
  { name: 'a non-literal address', answer: { kind: 'routed', address: 'worker-1:8443' } as Revalidation },
]) {
  test(`${row.name} counts as failed and leaves the binding to expire, never refreshed again`, async () => {
    const { cache, refresh, clock, calls } = setup();
    const learned = cache.learn('demo/a', '127.0.1.1:8443')!;
    clock.set(900);
    refresh.start('demo/a', dueHit(cache, 'demo/a'), 'h', 'http');
    calls[0]?.answer(row.answer);
    await refresh.idle();
    assert.equal(cache.current('demo/a')?.generation, learned.generation, 'the binding is unchanged');
    const again = cache.lookup('demo/a');
    assert.ok(again.kind === 'hit' && !again.refreshDue);
    assert.deepEqual(refresh.stats(), { ok: 0, failed: 1 });
    clock.set(1000);
    assert.equal(cache.lookup('demo/a').kind, 'miss');
  });
}

test('a binding replaced while its refresh was in flight is left alone (counted failed)', async () => {
  const { cache, refresh, clock, calls } = setup();
  cache.learn('demo/a', '127.0.1.1:8443');
  clock.set(900);
  refresh.start('demo/a', dueHit(cache, 'demo/a'), 'h', 'http');
  const newer = cache.learn('demo/a', '127.0.1.5:8443')!; // a request re-learned it meanwhile
  calls[0]?.answer({ kind: 'routed', address: '127.0.1.1:8443' });
  await refresh.idle();
  assert.equal(cache.current('demo/a')?.generation, newer.generation);
  assert.deepEqual(refresh.stats(), { ok: 0, failed: 1 });
});

test('at most maxInFlight refreshes at once; a later due hit may start one', async () => {
  const { cache, refresh, clock, calls } = setup(1);
  cache.learn('demo/a', '127.0.1.1:8443');
  cache.learn('demo/b', '127.0.1.2:8443');
  clock.set(900);
  refresh.start('demo/a', dueHit(cache, 'demo/a'), 'a', 'http');
  refresh.start('demo/b', dueHit(cache, 'demo/b'), 'b', 'http');
  assert.equal(calls.length, 1);
  calls[0]?.answer({ kind: 'routed', address: '127.0.1.1:8443' });
  await refresh.idle();
  refresh.start('demo/b', dueHit(cache, 'demo/b'), 'b', 'http');
  assert.equal(calls.length, 2, 'b was not claimed by the refused start');
  calls[1]?.answer({ kind: 'routed', address: '127.0.1.2:8443' });
  await refresh.idle();
  assert.deepEqual(refresh.stats(), { ok: 2, failed: 0 });
});

test('close aborts the refreshes in flight and starts no more', async () => {
  const { cache, refresh, clock, calls } = setup();
  cache.learn('demo/a', '127.0.1.1:8443');
  cache.learn('demo/b', '127.0.1.2:8443');
  clock.set(900);
  refresh.start('demo/a', dueHit(cache, 'demo/a'), 'a', 'http');
  await refresh.close();
  assert.equal(calls[0]?.signal.aborted, true);
  refresh.start('demo/b', dueHit(cache, 'demo/b'), 'b', 'http');
  assert.equal(calls.length, 1);
  assert.equal(refresh.inFlight, 0);
});
