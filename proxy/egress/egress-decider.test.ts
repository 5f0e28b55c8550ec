import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cachedDecider, DecisionTallies, opensTunnels, uncachedDecider } from './egress-decider.js';
import { EgressVerdictCache, type EgressVerdict, type Lease, type Resolution } from './verdict-cache.js';
import { ALLOW, DENY, digest, egressKey, fakeClock } from './testing/verdicts.js';

const TTL = 1000;
const HOUR = 3_600_000;
const A = egressKey(digest('a'));
const HOSTNAMES: EgressVerdict = { kind: 'hostnames', actorId: 'uid-a', atespace: 'demo', name: 'a', rules: [{ rule: 0, hostnames: ['api.example.test'] }] };

const answering = (verdict: EgressVerdict) => async (): Promise<Resolution> => ({ verdict, cacheable: true });

test('a verdict that may open a tunnel (an allow, or hostname rules) comes with its lease; a denial with none', () => {
  assert.deepEqual([ALLOW, HOSTNAMES, DENY].map(opensTunnels), [true, true, false]);
});

test('cache on: a miss and a hit of a verdict decided on the traffic give the lease of its entry, as an allow does', async () => {
  const clock = fakeClock();
  const cache = new EgressVerdictCache({ ttlMs: TTL, maxEntries: 10, now: clock.now });
  const heard: (Lease | undefined)[] = [];
  const decider = cachedDecider(cache, new DecisionTallies(), { learned: (_k, _v, lease) => void heard.push(lease) });
  const miss = await decider.decide(A, clock.now() + HOUR, answering(HOSTNAMES));
  const entry = { origin: 0, generation: 1, expiresAtMs: clock.now() + TTL };
  assert.deepEqual([miss.cache, miss.lease], ['miss', entry]);
  assert.deepEqual(heard, [entry], 'the grants hear the lease with the verdict');
  clock.advance(10);
  const hit = await decider.decide(A, clock.now() + HOUR, answering(DENY));
  assert.deepEqual([hit.cache, hit.verdict, hit.lease], ['hit', HOSTNAMES, entry]);
  const renewed = await decider.revalidate(A, clock.now() + HOUR, answering(HOSTNAMES));
  assert.deepEqual(renewed.lease, { origin: 0, generation: 2, expiresAtMs: clock.now() + TTL }, 'a re-validation renews the entry');
  const denied = await decider.revalidate(A, clock.now() + HOUR, answering(DENY));
  assert.equal(denied.lease, undefined);
});

test('cache off: a verdict decided on the traffic gets a lease of one TTL, never past the NotAfter', async () => {
  const clock = fakeClock();
  const decider = uncachedDecider(new DecisionTallies(), { ttlMs: TTL, now: clock.now });
  assert.deepEqual((await decider.decide(A, clock.now() + HOUR, answering(HOSTNAMES))).lease, { origin: 0, generation: 1, expiresAtMs: clock.now() + TTL });
  assert.deepEqual((await decider.decide(A, clock.now() + 300, answering(HOSTNAMES))).lease, { origin: 0, generation: 2, expiresAtMs: clock.now() + 300 });
  assert.equal((await decider.decide(A, clock.now() + HOUR, answering(DENY))).lease, undefined);
});
