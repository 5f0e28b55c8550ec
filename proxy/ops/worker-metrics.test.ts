import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import type { UpstreamOutcome } from '../api/filter.js';
import { OTHER_WORKERS, WorkerMetrics, workerErrorReason } from './worker-metrics.js';
import { Counters } from './stats.js';
import { createProxyMetrics } from './metrics.js';

const ok = (status = 200): UpstreamOutcome => ({ kind: 'response', status, headers: {} });

test('every outcome maps to the error it is, or to none', () => {
  assert.equal(workerErrorReason(ok()), undefined);
  assert.equal(workerErrorReason(ok(404)), undefined, 'the actor\'s own 4xx is not the worker\'s failure');
  assert.equal(workerErrorReason(ok(503)), '5xx');
  assert.equal(workerErrorReason({ kind: 'stale', status: 421 }), 'stale');
  assert.equal(workerErrorReason({ kind: 'connect-failed', code: 'ECONNREFUSED' }), 'connect');
  assert.equal(workerErrorReason({ kind: 'reset', requestWritten: true, code: 'ECONNRESET' }), 'reset');
  assert.equal(workerErrorReason({ kind: 'timeout' }), 'timeout');
  assert.equal(workerErrorReason({ kind: 'identity-rejected', presented: 'x', reason: 'y' }), 'identity');
  assert.equal(workerErrorReason({ kind: 'cancelled' }), undefined);
});

test('attempts and errors per worker; an invalid request involves no worker and is not counted', () => {
  const w = new WorkerMetrics();
  w.observe('127.0.1.1:8443', ok());
  w.observe('127.0.1.1:8443', { kind: 'stale', status: 421 });
  w.observe('127.0.1.2:8443', { kind: 'connect-failed', code: 'ECONNREFUSED' });
  w.observe('127.0.1.2:8443', { kind: 'invalid-request', code: 'UND_ERR_INVALID_ARG' });
  w.observe('127.0.1.1:8443', { kind: 'cancelled' });
  const counts = w.counts();
  assert.deepEqual(counts.map((c) => [c.worker, c.requests]), [['127.0.1.1:8443', 3], ['127.0.1.2:8443', 1]]);
  assert.equal(counts[0]?.errors.stale, 1);
  assert.equal(counts[0]?.errors['5xx'], 0);
  assert.equal(counts[1]?.errors.connect, 1);
});

test('the label set is bounded: beyond the limit new workers count as "other" until a named one has been idle long enough', () => {
  let now = 0;
  const w = new WorkerMetrics({ maxWorkers: 2, idleMs: 1000, clock: { now: () => now } });
  w.observe('10.0.0.1:8443', ok());
  w.observe('10.0.0.2:8443', ok());
  now = 500;
  w.observe('10.0.0.3:8443', ok(502)); // both slots used recently
  w.observe('10.0.0.1:8443', ok());
  assert.deepEqual(w.counts().map((c) => [c.worker, c.requests, c.errors['5xx']]), [['10.0.0.1:8443', 2, 0], ['10.0.0.2:8443', 1, 0], [OTHER_WORKERS, 1, 1]]);
  now = 1200; // 10.0.0.2 idle for 1200 ms: its slot goes to the next new worker; 10.0.0.1 was used at 500
  w.observe('10.0.0.3:8443', ok());
  assert.deepEqual(w.counts().map((c) => [c.worker, c.requests]), [['10.0.0.1:8443', 2], ['10.0.0.3:8443', 1], [OTHER_WORKERS, 1]]);
  w.observe('10.0.0.2:8443', ok()); // back, but both slots are in use recently: other
  assert.deepEqual(w.counts().map((c) => [c.worker, c.requests]), [['10.0.0.1:8443', 2], ['10.0.0.3:8443', 1], [OTHER_WORKERS, 2]]);
  assert.equal(w.counts().find((c) => c.worker === '10.0.0.1:8443')?.idleMs, 700);
});

test('/metrics: worker counters, the labelled duration histogram and cacheLabelOf', async () => {
  const counters = new Counters(2);
  const m = createProxyMetrics(counters, new Registry());
  counters.workers.observe('127.0.1.7:8443', ok());
  counters.workers.observe('127.0.1.7:8443', { kind: 'reset', requestWritten: false, code: 'ECONNRESET' });
  m.observeRequest(0.0004, 'hit', 'http/1.1');
  m.observeRequest(0.002, 'hit', 'h2');
  m.observeRequest(0.03, 'miss', 'http/1.1');
  const text = await m.registry.metrics();
  assert.match(text, /^actor_edge_proxy_worker_requests_total\{worker="127\.0\.1\.7:8443"\} 2$/m);
  assert.match(text, /^actor_edge_proxy_worker_errors_total\{worker="127\.0\.1\.7:8443",reason="reset"\} 1$/m);
  assert.match(text, /^actor_edge_proxy_worker_errors_total\{worker="127\.0\.1\.7:8443",reason="connect"\} 0$/m);
  assert.match(text, /^actor_edge_proxy_request_duration_seconds_bucket\{le="0.0005",cache="hit",protocol="http\/1.1"\} 1$/m);
  assert.match(text, /^actor_edge_proxy_request_duration_seconds_count\{cache="hit",protocol="h2"\} 1$/m);
  assert.match(text, /^actor_edge_proxy_request_duration_seconds_bucket\{le="0.025",cache="miss",protocol="http\/1.1"\} 0$/m);
  assert.match(text, /^actor_edge_proxy_request_duration_seconds_bucket\{le="0.05",cache="miss",protocol="http\/1.1"\} 1$/m);
  assert.match(text, /^actor_edge_proxy_reruns_by_attempt_total\{attempt="2"\} 0$/m);
  counters.rerunsByAttempt[3]!++;
  assert.match(await m.registry.metrics(), /^actor_edge_proxy_reruns_by_attempt_total\{attempt="3"\} 1$/m, 'a count above --max-reruns still shows');
  const { cacheLabelOf } = await import('./metrics.js');
  assert.deepEqual(['hit', 'miss', 'coalesced', 'rerun', undefined, 'other'].map(cacheLabelOf), ['hit', 'miss', 'miss', 'rerun', 'none', 'none']);
});
