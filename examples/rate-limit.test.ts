import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRateLimitFilter } from './rate-limit.js';
import { fakeContext } from './testing/fake-context.js';
import type { FilterResult } from '../proxy/api/public.js';

const SUFFIX = 'actors.resources.substrate.ate.dev';
const host = (name: string): string => `${name}.demo.${SUFFIX}`;

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

function status(r: FilterResult): number {
  return r.kind === 'reply' ? r.reply.status : 0;
}

test('each actor gets its own bucket: the burst passes, the next request is 429 with Retry-After', () => {
  const c = clock();
  const f = createRateLimitFilter({ ratePerSecond: 2, burst: 3, actorSuffix: SUFFIX, now: c.now });
  for (let i = 0; i < 3; i++) assert.equal((f.onRequest?.(fakeContext(host('a'))) as FilterResult).kind, 'continue');
  const limited = f.onRequest?.(fakeContext(host('a'))) as FilterResult;
  assert.equal(status(limited), 429);
  assert.equal(limited.kind === 'reply' && limited.reply.headers?.['retry-after'], '1');
  assert.equal((f.onRequest?.(fakeContext(host('b'))) as FilterResult).kind, 'continue', 'another actor is not affected');
});

test('tokens refill at the configured rate', () => {
  const c = clock();
  const f = createRateLimitFilter({ ratePerSecond: 2, burst: 1, actorSuffix: SUFFIX, now: c.now });
  assert.equal((f.onRequest?.(fakeContext(host('a'))) as FilterResult).kind, 'continue');
  assert.equal(status(f.onRequest?.(fakeContext(host('a'))) as FilterResult), 429);
  c.advance(499);
  assert.equal(status(f.onRequest?.(fakeContext(host('a'))) as FilterResult), 429);
  c.advance(1);
  assert.equal((f.onRequest?.(fakeContext(host('a'))) as FilterResult).kind, 'continue');
});

test('a re-run of the same request is not counted twice; hosts that name no actor pass through', () => {
  const c = clock();
  const f = createRateLimitFilter({ ratePerSecond: 1, burst: 1, actorSuffix: SUFFIX, now: c.now });
  assert.equal((f.onRequest?.(fakeContext(host('a'))) as FilterResult).kind, 'continue');
  assert.equal((f.onRequest?.(fakeContext(host('a'), {}, 1)) as FilterResult).kind, 'continue');
  for (let i = 0; i < 5; i++) assert.equal((f.onRequest?.(fakeContext('example.com')) as FilterResult).kind, 'continue');
});

test('bad settings are refused at start-up', () => {
  assert.throws(() => createRateLimitFilter({ ratePerSecond: 0, burst: 1, actorSuffix: SUFFIX }), /RATE_LIMIT_RPS/);
  assert.throws(() => createRateLimitFilter({ ratePerSecond: 1, burst: 0, actorSuffix: SUFFIX }), /RATE_LIMIT_BURST/);
});
