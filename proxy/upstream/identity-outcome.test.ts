/**
 * A worker failing identity verification (`identity-rejected`): the chain never re-runs it (502
 * PROXY_ERR_UPSTREAM_IDENTITY), and actor-cache evicts only the binding that request used, not the worker's others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { UpstreamOutcome } from '../api/filter.js';
import { ERRORS } from '../http/errors.js';
import { DEFAULT_RERUN_POLICY, shouldRerun } from '../chain/rerun.js';
import { BindingCache } from '../stages/actor-cache/binding-cache.js';
import { createActorCacheFilter } from '../stages/actor-cache/filter.js';
import { testRequest } from '../testing/proxy-request.js';
import { SUFFIX } from '../../lib/testing/actors.js';

const IDENTITY: UpstreamOutcome = { kind: 'identity-rejected', presented: 'URI:spiffe://elsewhere/x', reason: 'no URI SAN starts with spiffe://cluster.local/' };

test('identity-rejected never re-runs, whatever re-runs are left', () => {
  for (const attempt of [0, 1]) {
    const decision = shouldRerun({
      outcome: IDENTITY,
      attempt,
      policy: DEFAULT_RERUN_POLICY,
      elapsedMs: 1,
      jitter: 0,
      method: 'GET',
      bodyReplayable: true,
      responseStarted: false,
      downstreamClosed: false,
    });
    assert.deepEqual(decision, { kind: 'fail', error: ERRORS.UPSTREAM_IDENTITY });
  }
  assert.equal(ERRORS.UPSTREAM_IDENTITY.status, 502);
  assert.equal(ERRORS.UPSTREAM_IDENTITY.code, 'PROXY_ERR_UPSTREAM_IDENTITY');
});

test('actor-cache evicts the binding used (reason identity) and keeps the other bindings to that worker', () => {
  const cache = new BindingCache({ ttlMs: 60_000, maxEntries: 100 });
  const filter = createActorCacheFilter({ cache, actorSuffix: SUFFIX });
  cache.learn('demo/a', '127.0.1.1:8443');
  cache.learn('demo/b', '127.0.1.1:8443');
  const ctx = testRequest('GET', performance.now(), `a.demo.${SUFFIX}`);
  filter.onRequest?.(ctx);
  assert.equal(ctx.route?.source, 'cache');
  filter.onUpstreamResponse?.(ctx, IDENTITY);
  assert.equal(cache.current('demo/a'), undefined);
  assert.equal(cache.current('demo/b')?.address, '127.0.1.1:8443');
  assert.equal(cache.stats().evictions.identity, 1);
  assert.equal(cache.stats().evictions.worker, 0);
});
