/**
 * The admin API an operator meets on a `--workers 2` proxy (the primary serves it and fans calls out): the index,
 * one binding, evicting every binding on one worker (a node being drained), paging, the hit ratio of the summed
 * `/stats`, the egress verdict cache's routes and block, readiness, the product's 404 for unknown routes, the dashboard's files, and state-changing calls
 * logged once, by the primary, with the caller's address, and `/stats/history` summed over the workers. A real stub and extproc (in the test's process) and proxy.
 * Needs processes: `--workers 2` (node:cluster): a primary and its worker processes.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { waitFor } from '../../lib/testing/wait.js';
import { metricSum } from '../../lib/testing/scrape.js';
import { adminJson, client, send, startStack, stubActor, type Stack, type Stub } from '../testing/stack.js';
import type { TestProxy } from '../testing/proxy.js';

let stack: Stack<TestProxy>;
let stub: Stub;
let proxy: TestProxy;

before(async () => {
  stack = await startStack({ mode: 'process', stub: { workers: 3, capacity: 4, actors: 12 }, proxyArgs: ['--workers', '2', '--cache-ttl-ms', '600000', '--cache-refresh-ahead', 'off'] });
  ({ stub, proxy } = stack);
});

after(async () => {
  await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
  await stack?.stop();
});

async function call(path: string, method = 'GET'): Promise<{ status: number; body: Record<string, any> }> {
  const res = await request(`${proxy.admin}${path}`, { method: method as 'GET', dispatcher: client });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, any> };
}

/** Sends requests until both proxy processes hold the binding of each actor (learned by one, adopted by the other). */
async function warm(actors: readonly string[]): Promise<void> {
  for (const a of actors) assert.equal((await send(proxy, a, { headers: { connection: 'close' } })).status, 200);
  await waitFor(async () => {
    const dump = await call('/cache?limit=1000');
    return dump.body.workers.every((w: { body: { entries: number } }) => w.body.entries >= actors.length);
  }, 10_000, 'every process to hold every binding');
}

test('--workers 2: GET / lists the primary\'s and the forwarded endpoints; an unknown route answers {error, code} once', async () => {
  const index = await call('/');
  assert.equal(index.status, 200);
  assert.equal(index.body.component, 'proxy');
  const byRoute = new Map<string, string>(index.body.endpoints.map((e: { method: string; path: string; description: string }) => [`${e.method} ${e.path}`, e.description]));
  for (const e of ['GET /ready', 'GET /live', 'GET /stats', 'POST /stats/reset', 'GET /metrics', 'POST /filters/reload', 'GET /dashboard']) assert.ok(byRoute.has(e), e);
  for (const e of ['GET /cache', 'GET /cache/:atespace/:name', 'DELETE /cache', 'GET /upstreams']) assert.match(byRoute.get(e) ?? '', /\(on every worker process\)$/, e);
  assert.ok(![...byRoute.keys()].some((k) => k.includes('/internal/') || k.endsWith('/*')), 'internal and catch-all routes are not listed');
  const unknown = await call('/config_dump');
  assert.equal(unknown.status, 404);
  assert.deepEqual(Object.keys(unknown.body).sort(), ['code', 'error']);
  assert.equal(unknown.body.code, 'ROUTE_NOT_FOUND');
  const live = await request(`${proxy.admin}/live`, { dispatcher: client });
  assert.deepEqual([live.statusCode, await live.body.text()], [200, 'LIVE\n']);
  const ready = await request(`${proxy.admin}/ready`, { dispatcher: client, headers: { accept: 'application/json' } });
  assert.equal(ready.statusCode, 200);
  assert.deepEqual(await ready.body.json(), { state: 'LIVE', ready: true, reasons: [] });
});

test('--workers 2: the egress verdict cache\'s routes are answered by every process, and /stats sums its block', async () => {
  const index = await call('/');
  const byRoute = new Map<string, string>(index.body.endpoints.map((e: { method: string; path: string; description: string }) => [`${e.method} ${e.path}`, e.description]));
  for (const e of ['GET /cache/egress', 'DELETE /cache/egress']) assert.match(byRoute.get(e) ?? '', /\(on every worker process\)$/, e);
  const listing = await call('/cache/egress');
  assert.equal(listing.status, 200);
  assert.deepEqual(listing.body.workers.map((w: { status: number; body: { entries: number; ttlMs: number } }) => [w.status, w.body.entries, w.body.ttlMs]), [[200, 0, 5000], [200, 0, 5000]]);
  const evicted = await call('/cache/egress?all=true', 'DELETE');
  assert.equal(evicted.status, 200);
  assert.deepEqual(evicted.body.workers.map((w: { body: unknown }) => w.body), [{ evicted: 0, all: true }, { evicted: 0, all: true }]);
  const refused = await call('/cache/egress', 'DELETE');
  assert.equal(refused.status, 400);
  assert.equal(refused.body.code, 'BAD_REQUEST');
  const s = await adminJson<{ egress: { cache: { enabled: boolean; hits: number; hitRatio: number | null; shared: { enabled: boolean } } } }>(proxy.admin, '/stats');
  assert.equal(s.egress.cache.enabled, true);
  assert.equal(s.egress.cache.hitRatio, null, 'no lookup yet');
  assert.equal(s.egress.cache.shared.enabled, true, 'each worker shares its verdicts through the primary');
});

test('--workers 2: one binding, paging, eviction of every binding on one worker, and the summed hit ratio', async () => {
  const actors = ['actor-005', 'actor-006', 'actor-007', 'actor-008'];
  await warm(actors);
  const placed = await stubActor(stub, 'actor-005');
  const one = await call('/cache/demo/actor-005');
  assert.equal(one.status, 200);
  assert.equal(one.body.workers.length, 2);
  for (const w of one.body.workers) {
    assert.equal(w.status, 200);
    assert.equal(w.body.binding.key, 'demo/actor-005');
    assert.equal(w.body.binding.address, `${placed.workerIp}:${stub.workerPort}`, 'the stub\'s placement');
  }
  const none = await call('/cache/demo/actor-011');
  assert.equal(none.status, 404);
  assert.equal(none.body.code, 'BINDING_NOT_FOUND');
  assert.equal(typeof none.body.error, 'string');
  assert.deepEqual(none.body.workers.map((w: { status: number }) => w.status), [404, 404]);

  // Paging by key in each process.
  const page = await call('/cache?order=key&limit=2');
  for (const w of page.body.workers) assert.deepEqual([w.body.bindings.map((b: { key: string }) => b.key), w.body.next], [['demo/actor-005', 'demo/actor-006'], 'demo/actor-006']);
  const next = await call('/cache?order=key&limit=2&after=demo/actor-006');
  for (const w of next.body.workers) assert.deepEqual([w.body.bindings.map((b: { key: string }) => b.key), w.body.next], [['demo/actor-007', 'demo/actor-008'], null]);

  // A node is drained: evict everything on its worker, in both processes.
  const ip = placed.workerIp;
  const onIt = (await call(`/cache?worker=${ip}&limit=1000`)).body.workers[0].body.matched as number;
  assert.ok(onIt >= 1);
  const evicted = await call(`/cache?worker=${ip}`, 'DELETE');
  assert.equal(evicted.status, 200);
  assert.deepEqual(evicted.body.workers.map((w: { body: { evicted: number; worker: string } }) => [w.body.evicted, w.body.worker]), [[onIt, ip], [onIt, ip]]);
  assert.equal((await call('/cache/demo/actor-005')).status, 404, 'gone from both processes');
  const left = await call(`/cache?worker=${ip}`);
  assert.deepEqual(left.body.workers.map((w: { body: { matched: number } }) => w.body.matched), [0, 0]);

  // The next request for that actor misses, resolves and is bound again.
  assert.equal((await send(proxy, 'actor-005', { headers: { connection: 'close' } })).status, 200);
  const s = await adminJson<{ cache: { hits: number; misses: number; hitRatio: number }; workers: number }>(proxy.admin, '/stats');
  assert.equal(s.workers, 2);
  assert.ok(s.cache.hits + s.cache.misses > 0);
  assert.equal(s.cache.hitRatio, Math.round((s.cache.hits / (s.cache.hits + s.cache.misses)) * 10_000) / 10_000, 'the ratio of the sums, not a sum of ratios');
  assert.ok(s.cache.hitRatio <= 1);
});

test('--workers 2: state-changing calls are access lines written once, by the primary, with the caller\'s address; the dashboard is served', async () => {
  // Found by its path: the line of an earlier test's admin call may still be on its way through the pipe.
  const PATH = '/cache?worker=127.0.9.9';
  const linesOf = () => proxy.logs().filter((l) => l.msg === 'admin' && l.path === PATH) as { pid: number; method: string; path: string; status: number; client: string }[];
  const res = await request(`${proxy.admin}${PATH}`, { method: 'DELETE', dispatcher: client });
  assert.equal(res.statusCode, 200);
  await res.body.text();
  await waitFor(() => linesOf().length > 0, 5000, 'the admin call to be logged');
  // A worker that logged the primary's fan-out would write its line at about the same time: give it that time.
  await new Promise((r) => setTimeout(r, 500));
  const lines = linesOf();
  assert.equal(lines.length, 1, 'the workers do not log the primary\'s fan-out again');
  assert.equal(lines[0]?.pid, proxy.component.pid, 'written by the primary');
  assert.deepEqual([lines[0]?.method, lines[0]?.path, lines[0]?.status], ['DELETE', PATH, 200]);
  assert.match(lines[0]?.client ?? '', /^127\.0\.0\.1:\d+$/);
  assert.ok(!proxy.logs().some((l) => l.msg === 'admin call'), 'not on the component log as well');

  const page = await request(`${proxy.admin}/dashboard`, { dispatcher: client });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
  const html = await page.body.text();
  assert.match(html, /<script type="module" src="\/dashboard\/view\.js" blocking="render"><\/script>/);
  // The first frame's data: the primary's own sums, embedded.
  const initial = JSON.parse(/<script type="application\/json" id="initial">(.*?)<\/script>/s.exec(html)?.[1] ?? 'null') as { stats: { workers: number }; metrics: string; history: { samples: unknown[] } };
  assert.equal(initial.stats.workers, 2);
  assert.match(initial.metrics, /actor_edge_proxy_requests_total/);
  assert.ok(initial.history.samples.length > 0, 'the history of the seconds since the workers started');
  for (const file of ['view.js', 'model.js', 'history.js']) {
    const js = await request(`${proxy.admin}/dashboard/${file}`, { dispatcher: client });
    assert.equal(js.statusCode, 200, file);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    assert.doesNotMatch(await js.body.text(), /sourceMappingURL/);
  }
  const missing = await call('/dashboard/nope.js');
  assert.deepEqual([missing.status, missing.body.code], [404, 'ROUTE_NOT_FOUND']);
});

test('--workers 2: /stats/history sums the workers second by second, from lifetime counters', async () => {
  for (const a of ['actor-000', 'actor-001', 'actor-002', 'actor-003']) assert.equal((await send(proxy, a, { headers: { connection: 'close' } })).status, 200);
  const lifetime = async (): Promise<number> => metricSum(await (await request(`${proxy.admin}/metrics`, { dispatcher: client })).body.text(), 'actor_edge_proxy_requests_total');
  const recorded = async (): Promise<number> => ((await call('/stats/history')).body.samples as { requests: number }[]).reduce((n, s) => n + s.requests, 0);
  // Each worker closes its second a moment after the second ends.
  await waitFor(async () => (await recorded()) === (await lifetime()), 10_000, 'the history to hold every request answered');
  const doc = (await call('/stats/history')).body as { intervalMs: number; capacity: number; bounds: number[]; samples: { at: number }[] };
  assert.deepEqual([doc.intervalMs, doc.capacity, doc.bounds.length], [1000, 300, 15]);
  const last = doc.samples[doc.samples.length - 1]?.at as number;
  assert.deepEqual((await call(`/stats/history?since=${last - 1}`)).body.samples.map((s: { at: number }) => s.at), [last], '?since= passes to the workers');
});
