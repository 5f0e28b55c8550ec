import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { bindingRows, dashboardView, histogramDelta, histogramsBy, parseMetrics, quantile, sumBy, type Histogram, type Snapshot } from './model.js';
import { Counters } from '../../ops/stats.js';
import { createProxyMetrics } from '../../ops/metrics.js';

test('parses the Prometheus text format: labels with escapes, +Inf, comments', () => {
  const samples = parseMetrics(
    [
      '# HELP x_total Things.',
      '# TYPE x_total counter',
      'x_total{code="200"} 3',
      'x_total{code="503",note="a \\"quoted\\" \\\\ thing"} 1',
      'plain 4.5',
      'h_bucket{le="+Inf"} 7',
      'garbage line',
      '',
    ].join('\n'),
  );
  assert.deepEqual(samples, [
    { name: 'x_total', labels: { code: '200' }, value: 3 },
    { name: 'x_total', labels: { code: '503', note: 'a "quoted" \\ thing' }, value: 1 },
    { name: 'plain', labels: {}, value: 4.5 },
    { name: 'h_bucket', labels: { le: '+Inf' }, value: 7 },
  ]);
  assert.deepEqual([...sumBy(samples, 'x_total', 'code')], [['200', 3], ['503', 1]]);
});

const h = (bounds: number[], cumulative: number[]): Histogram => ({ bounds, cumulative, count: cumulative[cumulative.length - 1] ?? 0, sum: 0 });

test('quantiles as Prometheus\' histogram_quantile computes them', () => {
  // 100 observations: 50 in (0, 0.001], 40 in (0.001, 0.01], 10 in (0.01, 0.1].
  const x = h([0.001, 0.01, 0.1, Infinity], [50, 90, 100, 100]);
  assert.equal(quantile(0.5, x), 0.001);
  assert.ok(Math.abs((quantile(0.7, x) as number) - (0.001 + 0.009 * (20 / 40))) < 1e-12);
  assert.ok(Math.abs((quantile(0.99, x) as number) - (0.01 + 0.09 * (9 / 10))) < 1e-12);
  assert.equal(quantile(0.25, x), 0.0005, 'the first bucket interpolates from 0');
  assert.equal(quantile(0.99, h([0.001, 0.01, Infinity], [0, 0, 5])), 0.01, 'in the +Inf bucket: the highest finite bound');
  assert.equal(quantile(0.5, h([0.001, Infinity], [0, 0])), null, 'empty');
  const before = h([0.001, 0.01, 0.1, Infinity], [10, 20, 30, 30]);
  assert.deepEqual(histogramDelta(x, before).cumulative, [40, 70, 70, 70]);
  assert.equal(histogramDelta(x, before).count, 70);
  assert.equal(histogramDelta(before, x), before, 'a histogram that went down (restarted process) is taken as it is');
});

test('the labelled request-duration histogram from the proxy\'s own registry, read back by cache outcome', async () => {
  const m = createProxyMetrics(new Counters(), new Registry());
  for (const s of [0.0003, 0.0004, 0.0008, 0.002]) m.observeRequest(s, 'hit', 'http/1.1');
  m.observeRequest(0.0009, 'hit', 'h2');
  for (const s of [0.02, 0.04]) m.observeRequest(s, 'miss', 'http/1.1');
  const byCache = histogramsBy(parseMetrics(await m.registry.metrics()), 'actor_edge_proxy_request_duration_seconds', 'cache');
  assert.deepEqual([...byCache.keys()].sort(), ['hit', 'miss']);
  const hit = byCache.get('hit') as Histogram;
  assert.equal(hit.count, 5, 'both protocols summed');
  assert.equal(quantile(0.5, hit), 0.0005 + 0.0005 * (0.5 / 2), 'rank 2.5 of 5: a quarter into (0.0005, 0.001], which holds 2 with 2 below');
  const miss = byCache.get('miss') as Histogram;
  assert.equal(quantile(0.99, miss) !== null && (quantile(0.99, miss) as number) > 0.025 && (quantile(0.99, miss) as number) <= 0.05, true);
});

function snapshot(at: number, stats: unknown, metrics = ''): Snapshot {
  return { at, stats, metrics: parseMetrics(metrics) };
}

test('the dashboard numbers: rates between polls, the hit ratio from /stats, the resolver\'s calls, errors by status, latency over the window', () => {
  const stats = (total: number, hits: number, streams: number, extra: Record<string, unknown> = {}) => ({
    requests: { total, byStatus: { '1xx': 0, '2xx': total - 3, '3xx': 0, '4xx': 1, '5xx': 2 } },
    extproc: { streams, active: 0, errors: 1, timeouts: 2 },
    upstream: { connectFailures: 4, resets: 5 },
    cache: { enabled: true, hits, misses: total - hits, hitRatio: total === 0 ? null : Math.round((hits / total) * 10_000) / 10_000 },
    reruns: { stale: 1, connect: 0, reset: 0 },
    resolver: { kind: 'extproc', resumeCalls: {}, flightJoins: 0 },
    tunnels: { upgrade: { active: 2 }, connect: { active: 1 } },
    ...extra,
  });
  const histogram = (hits: number[]) =>
    ['0.001', '0.01', '+Inf'].map((le, i) => `actor_edge_proxy_request_duration_seconds_bucket{le="${le}",cache="hit",protocol="h2"} ${hits[i]}`).join('\n');
  const oldest = snapshot(0, stats(0, 0, 0), histogram([0, 0, 0]));
  const previous = snapshot(9000, stats(80, 60, 20), histogram([50, 60, 60]));
  const now = snapshot(10_000, stats(100, 90, 30), `${histogram([80, 90, 90])}\nactor_edge_proxy_requests_total{code="200"} 97\nactor_edge_proxy_requests_total{code="503"} 2\nactor_edge_proxy_requests_total{code="404"} 1`);
  const v = dashboardView(now, previous, oldest);
  assert.equal(v.requestsTotal, 100);
  assert.equal(v.requestRate, 20, '20 more requests in 1 s');
  assert.equal(v.hitRatio, 0.9);
  assert.deepEqual([v.hits, v.misses], [90, 10]);
  assert.equal(v.resolver.label, 'ext_proc streams/s');
  assert.equal(v.resolver.rate, 10);
  assert.match(v.resolver.note, /extproc/);
  assert.deepEqual(v.errorsByCode, [{ code: '404', count: 1 }, { code: '503', count: 2 }]);
  assert.deepEqual(v.errorsSinceReset, { '4xx': 1, '5xx': 2 });
  assert.deepEqual(v.upstreamFailures, { connect: 4, reset: 5, extprocErrors: 1, extprocTimeouts: 2 });
  assert.deepEqual(v.tunnels, { upgrade: 2, connect: 1 });
  assert.equal(v.latencyWindowS, 10);
  assert.deepEqual(v.latency.map((r) => [r.cache, r.count]), [['hit', 90]]);
  assert.ok((v.latency[0]?.p50Ms as number) > 0 && (v.latency[0]?.p50Ms as number) <= 1);

  const reset = dashboardView(snapshot(11_000, stats(5, 5, 0)), now, oldest);
  assert.equal(reset.requestRate, null, 'a counter that went down (a stats reset) gives no rate');

  const own = dashboardView(
    snapshot(2000, stats(10, 0, 0, { resolver: { kind: 'apiserver', resumeCalls: { OK: 8, UNAVAILABLE: 2 }, flightJoins: 0 } })),
    snapshot(1000, stats(5, 0, 0, { resolver: { kind: 'apiserver', resumeCalls: { OK: 4 }, flightJoins: 0 } })),
    undefined,
  );
  assert.deepEqual([own.resolver.label, own.resolver.total, own.resolver.rate], ['ResumeActor calls/s', 10, 6]);
  const unlabelled = dashboardView(snapshot(1, {}, 'actor_edge_proxy_request_duration_seconds_bucket{le="+Inf"} 3\nactor_edge_proxy_request_duration_seconds_count 3'), undefined, undefined);
  assert.deepEqual(unlabelled.latency.map((r) => [r.cache, r.count]), [['all', 3]], 'requests observed without a cache label');
  assert.equal(dashboardView(snapshot(1, { workers: 2 }), undefined, undefined).processes, 2);
});

test('binding rows from one process\'s dump or from the cluster primary\'s per-worker answers', () => {
  const single = bindingRows({ matched: 2, bindings: [{ key: 'demo/b', address: '127.0.1.2:8443', expiresInMs: 100, hits: 1 }, { key: 'demo/a', address: '127.0.1.1:8443', expiresInMs: 200, hits: 2 }] });
  assert.deepEqual(single, {
    matched: 2,
    rows: [
      { key: 'demo/a', address: '127.0.1.1:8443', expiresInMs: 200, hits: 2, processes: 1 },
      { key: 'demo/b', address: '127.0.1.2:8443', expiresInMs: 100, hits: 1, processes: 1 },
    ],
  });
  const merged = bindingRows({
    workers: [
      { status: 200, body: { matched: 1, bindings: [{ key: 'demo/a', address: '127.0.1.1:8443', expiresInMs: 100, hits: 2 }] } },
      { status: 200, body: { matched: 2, bindings: [{ key: 'demo/a', address: '127.0.1.9:8443', expiresInMs: 900, hits: 3 }, { key: 'demo/c', address: '127.0.1.3:8443', expiresInMs: 5, hits: 0 }] } },
    ],
  });
  assert.equal(merged.matched, 2);
  assert.deepEqual(merged.rows[0], { key: 'demo/a', address: '127.0.1.9:8443', expiresInMs: 900, hits: 5, processes: 2 }, 'the freshest address, hits summed');
  assert.equal(merged.rows[1]?.key, 'demo/c');
});
