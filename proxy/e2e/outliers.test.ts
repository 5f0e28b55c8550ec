/**
 * End to end (real apiserver-stub, extproc and proxy, in the test's process): outlier detection at the pool. A
 * worker that stops while requests for many of its actors arrive at once costs one failed connect: that failure
 * marks the address down, evicts the worker's bindings once, and every other request to it fails at once,
 * unsent, into its own re-run; every client gets 200 from the actors' new workers. When the worker listens
 * again, a probe lets its address back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { waitFor } from '../../lib/testing/wait.js';
import { actorName, adminJson, client, proxyStats, resetStats, send, startStack, type Stack, type Stub } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import type { ProxyStatsBlock } from '../ops/stats.js';

let stack: Stack;
let stub: Stub;
let proxy: InProcessTestProxy;

describe('outlier detection at the pool', () => {
  before(async () => {
    stack = await startStack({ stub: { workers: 3, capacity: 12, actors: 30 }, proxyArgs: ['--cache-ttl-ms', '600000'] });
    ({ stub, proxy } = stack);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await stack?.stop();
  });

  type Stats = ProxyStatsBlock & Pick<Awaited<ReturnType<typeof proxyStats>>, 'cache'>;
  const stats = async (): Promise<Stats> => (await proxyStats(proxy)) as unknown as Stats;

  test('a worker that stops under concurrent requests costs one failed connect; the rest fail fast into their re-runs and answer 200', async () => {
    // Learn twelve bindings; the worker holding the most of them (at least four) is the one that stops.
    const actors = Array.from({ length: 12 }, (_, i) => actorName(i));
    const byWorker = new Map<string, string[]>();
    for (const actor of actors) {
      const a = await send(proxy, actor);
      assert.equal(a.status, 200);
      byWorker.set(a.app?.worker as string, [...(byWorker.get(a.app?.worker as string) ?? []), actor]);
    }
    const [worker, onWorker] = [...byWorker].sort((x, y) => y[1].length - x[1].length)[0] as [string, string[]];
    assert.ok(onWorker.length >= 4, `worker ${worker} holds ${onWorker.length} of the actors`);

    await adminJson(stub.admin, `/workers/${worker}/stop`, 'POST');
    let restarted = false;
    try {
      await resetStats(proxy.admin);
      // Three requests per actor of the stopped worker, all at once (POSTs: they are re-run because none was sent).
      const answers = await Promise.all(
        onWorker.flatMap((actor) => [0, 1, 2].map((i) => send(proxy, actor, { method: 'POST', path: '/orders', body: `{"n":${i}}`, headers: { 'content-type': 'application/json' } }))),
      );
      for (const a of answers) {
        assert.equal(a.status, 200, a.text);
        assert.notEqual(a.app?.worker, worker);
      }
      const s = await stats();
      assert.equal(s.upstream.connectFailures, 1, 'one failed connect in all');
      assert.deepEqual(s.upstream.outliers.ejections, { refused: 1, reset: 0, timeout: 0, unreachable: 0 });
      assert.equal(s.upstream.outliers.down, 1);
      // Each other request either went to the pool before the failure (failed fast, unsent) or found its binding
      // already evicted (a miss); every failed one re-ran once.
      assert.equal(s.reruns.connect, 1 + s.upstream.outliers.failedFast);
      assert.equal(s.cache.evictions.connect, 1, 'the binding the first failure used');
      assert.ok(s.cache.evictions.worker >= onWorker.length - 1, "and the worker's other bindings with it, once");
      const metrics = await (await request(`${proxy.admin}/metrics`, { dispatcher: client })).body.text();
      assert.match(metrics, /^actor_edge_proxy_upstream_outlier_ejections_total\{reason="refused"\} 1$/m);
      assert.match(metrics, /^actor_edge_proxy_upstream_outlier_ejections_active 1$/m);
      assert.match(metrics, new RegExp(`^actor_edge_proxy_upstream_outlier_failed_fast_total ${s.upstream.outliers.failedFast}$`, 'm'));

      // The worker listens again: a probe connects and lets its address back.
      await adminJson(stub.admin, `/workers/${worker}/start`, 'POST');
      restarted = true;
      await waitFor(async () => (await stats()).upstream.outliers.down === 0, 10_000, 'the address to be let back');
      const back = await stats();
      assert.equal(back.upstream.outliers.readmissions.probe + back.upstream.outliers.readmissions.resume, 1);
      assert.equal(back.upstream.connectFailures, 1);
    } finally {
      if (!restarted) await adminJson(stub.admin, `/workers/${worker}/start`, 'POST');
    }
  });
});
