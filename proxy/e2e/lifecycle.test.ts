/**
 * End to end, cache off: outages and process lifecycle with a real apiserver-stub, extproc and proxy — the control
 * plane down (503 from ext_proc), ext_proc down (the miss waits on fresh streams within its re-run budget, then 500
 * on the stream error; recovery without a restart), and `--workers 2` sharing one listener, with exact sums, admin
 * fan-out and worker replacement. The stub, the proxies of the outage tests, and extproc once it is started again
 * after its outage, run in the test's process.
 * Needs processes: extproc's clean exit on SIGTERM (code 0) and `--workers 2`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { request } from 'undici';
import { freePort } from '../../lib/loopback.js';
import { metricSum, metricValue } from '../../lib/testing/scrape.js';
import { accessLine, actorName, adminJson, client, proxyStats, resetStats, send, startExtproc, startStub, type Extproc, type Stub, STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy, type TestProxy } from '../testing/proxy.js';

let stub: Stub;
/** A process at first (its exit code on SIGTERM is checked); started again in the test's process after its outage. */
let extproc: Extproc;
let extprocAddress: string;

before(async () => {
  stub = await startStub({ workers: 4, capacity: 4, actors: 10 });
  extprocAddress = `127.0.0.1:${await freePort()}`;
  extproc = await startExtproc(stub, [], extprocAddress, undefined, 'process');
});

after(async () => {
  await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
  await extproc?.component.stop();
  await stub?.component.stop();
});

// Side by side: the control plane's outage (its own extproc and proxy) and the two workers (on the file's extproc).
// The ext_proc outage comes after both: it stops and restarts the file's extproc.
describe('a proxy beside another', { concurrency: true }, () => {
  test('control plane down: ext_proc answers 503 and the client gets it as sent', async () => {
    // A short budget: the control plane never comes back, so it is waited out.
    const dead = await startExtproc({ ...stub, grpc: `127.0.0.1:${await freePort()}` }, ['--resume-budget-ms', '300']);
    const proxy: InProcessTestProxy = await startTestProxy({ mode: 'in-process', extproc: dead.grpc, args: [...STACK_TIMEOUTS, '--actor-cache', 'off'] });
    try {
      const a = await send(proxy, actorName(0));
      assert.equal(a.status, 503);
      assert.match(a.text, /unavailable/i);
      assert.equal((await proxyStats(proxy)).extproc.active, 0);
    } finally {
      await proxy.stop();
      await dead.component.stop();
    }
  });

  test('--workers 2: /stats and /metrics sum both workers exactly, /cache and /stats/reset reach both, a dead worker is replaced', async () => {
    const proxy: TestProxy = await startTestProxy({ extproc: extprocAddress, args: [...STACK_TIMEOUTS, '--workers', '2', '--cache-ttl-ms', '600000'] });
    try {
      // One after another, each on a fresh connection (the primary hands connections to the workers in turn).
      const actors = [actorName(3), actorName(4)];
      const sendOne = async (i: number): Promise<void> => {
        const a = await send(proxy, actors[i % 2] as string, { headers: { connection: 'close' }, requestId: `w-${i}` });
        assert.equal(a.status, 200);
      };
      await sendOne(0);
      await sendOne(1);
      // The workers share one binding table: once each learned binding is adopted by the other worker, every later
      // request is a hit wherever it lands.
      const adopted = async (): Promise<number> =>
        (await adminJson<{ cache: { shared: { adopted: number } } }>(proxy.admin, '/stats')).cache.shared.adopted;
      await waitFor(async () => (await adopted()) === 2, 5000, 'each worker adopting the binding the other learned');
      for (let i = 2; i < 40; i++) await sendOne(i);
      const lines = await Promise.all(Array.from({ length: 40 }, (_, i) => accessLine(proxy, `w-${i}`)));
      const byWorker = new Map<unknown, { hits: number; misses: number; actors: Set<unknown>; pid: unknown }>();
      for (const l of lines) {
        const w = byWorker.get(l.pid) ?? { hits: 0, misses: 0, actors: new Set(), pid: l.pid };
        if (l.cache === 'hit') w.hits++;
        else if (l.cache === 'miss') w.misses++;
        w.actors.add(l.authority);
        byWorker.set(l.pid, w);
      }
      assert.equal(byWorker.size, 2, 'both workers served requests');
      const workers = [...byWorker.values()];
      const misses = workers.reduce((a, w) => a + w.misses, 0);
      // One table for both workers: each actor is missed exactly once in all, then hits in either worker.
      assert.equal(misses, actors.length);
      assert.equal(workers.reduce((a, w) => a + w.hits + w.misses, 0), 40);

      const s = await proxyStats(proxy);
      assert.equal((s as unknown as { workers: number }).workers, 2);
      assert.equal(s.requests.total, 40);
      assert.equal(s.requests.byStatus['2xx'], 40);
      // Each worker holds both bindings (its own learn and the other's, adopted).
      const entries = 2 * actors.length;
      assert.deepEqual([s.cache.hits, s.cache.misses, s.cache.entries], [40 - misses, misses, entries]);
      assert.equal(s.extproc.streams, misses);

      const scrape = async (): Promise<string> => (await request(`${proxy.admin}/metrics`)).body.text();
      let text = await scrape();
      assert.equal(metricValue(text, 'actor_edge_proxy_requests_total{code="200"}'), 40);
      assert.equal(metricValue(text, 'actor_edge_proxy_extproc_streams_total'), misses);
      assert.equal(metricSum(text, 'actor_edge_proxy_request_duration_seconds_count'), 40, 'the workers\' duration histograms are merged');
      const ready = await request(`${proxy.admin}/ready`);
      assert.equal(ready.statusCode, 200);
      assert.equal(await ready.body.text(), 'LIVE\n');

      // /cache goes to every worker: each holds every binding; DELETE /cache empties both (admin evictions stay local).
      const dump = await adminJson<{ workers: { status: number; body: { entries: number } }[] }>(proxy.admin, '/cache');
      assert.deepEqual(dump.workers.map((w) => w.status), [200, 200]);
      assert.deepEqual(dump.workers.map((w) => w.body.entries), [actors.length, actors.length]);
      await adminJson(proxy.admin, '/cache', 'DELETE');
      const cleared = await proxyStats(proxy);
      assert.deepEqual([cleared.cache.entries, cleared.cache.evictions.admin], [0, entries]);

      // /stats/reset zeros every worker's counters; Prometheus keeps the lifetime counters.
      const reset = await request(`${proxy.admin}/stats/reset`, { method: 'POST' });
      assert.equal(reset.statusCode, 200);
      const fresh = (await reset.body.json()) as { requests: { total: number }; workers: number };
      assert.deepEqual([fresh.workers, fresh.requests.total], [2, 0], 'the reset answers the fresh summed /stats');
      const zero = await proxyStats(proxy);
      assert.deepEqual([zero.requests.total, zero.cache.hits, zero.cache.misses, zero.extproc.streams], [0, 0, 0, 0]);
      text = await scrape();
      assert.equal(metricValue(text, 'actor_edge_proxy_requests_total{code="200"}'), 40);

      // A worker that dies is replaced, and the replacement serves.
      const [victim] = workers;
      process.kill(victim?.pid as number, 'SIGKILL');
      await waitFor(() => proxy.component.logs().some((l) => l.msg === 'proxy worker died: starting a replacement'), 10_000, 'the primary to notice');
      const known = new Set(workers.map((w) => w.pid));
      let n = 0;
      await waitFor(async () => {
        const id = `after-${n++}`;
        assert.equal((await send(proxy, actors[0] as string, { headers: { connection: 'close' }, requestId: id })).status, 200);
        return !known.has((await accessLine(proxy, id)).pid);
      }, 20_000, 'a request served by the replacement worker');
      assert.equal(((await proxyStats(proxy)) as unknown as { workers: number }).workers, 2);
      assert.equal(await proxy.component.stop(), 0);
    } finally {
      await proxy.component.stop();
    }
  });
});

// SIGTERM draining is covered against held responses in drain-lifecycle.test.ts and drain.test.ts.

test('ext_proc down → the miss waits on fresh streams within the re-run budget, then 500 on the stream error (never the message timeout); the proxy recovers without a restart', async () => {
  // A short re-run budget (retries wait 25, 50, 100, 200 ms...): the outage outlasts it, so it is waited out. (The
  // connect timeout must be below it.)
  const proxy: InProcessTestProxy = await startTestProxy({ mode: 'in-process', extproc: extprocAddress, args: [...STACK_TIMEOUTS, '--actor-cache', 'off', '--rerun-budget-ms', '600', '--connect-timeout-ms', '300'] });
  let stopped = false;
  try {
    assert.equal((await send(proxy, actorName(1))).status, 200);
    assert.equal(await extproc.component.stop(), 0);
    stopped = true;
    await resetStats(proxy.admin);
    const down = await send(proxy, actorName(1));
    assert.equal(down.status, 500);
    let s = await proxyStats(proxy);
    assert.equal(s.extproc.timeouts, 0, 'failed on stream errors, not by waiting out the message timeout');
    assert.ok(s.extproc.retries.retried >= 1, 'retried on fresh streams while it waited');
    assert.equal(s.extproc.errors, 1 + s.extproc.retries.retried, 'every stream it opened ended in the stream error');
    assert.equal(s.extproc.retries.budgetExhausted, 1, 'until the re-run budget was spent');
    extproc = await startExtproc(stub, [], extprocAddress);
    stopped = false;
    const failures: number[] = [];
    await waitFor(async () => {
      const a = await send(proxy, actorName(1));
      if (a.status !== 200) failures.push(a.status);
      return a.status === 200;
    }, 20_000, 'recovery');
    assert.deepEqual(failures, failures.map(() => 500), 'while ext_proc restarts, a miss that fails is the stream-error 500');
    s = await proxyStats(proxy);
    // A miss that recovered after k retries had k failed streams; one that failed had one more.
    assert.equal(s.extproc.errors, s.extproc.retries.retried + 1 + failures.length);
    assert.equal(s.extproc.timeouts, 0);
    assert.equal(s.extproc.active, 0);
    assert.equal(s.extproc.retries.waiting, 0);
  } finally {
    if (stopped) extproc = await startExtproc(stub, [], extprocAddress);
    await proxy.stop();
  }
});
