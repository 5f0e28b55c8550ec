import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildArmResult } from './arm-result.js';
import type { LoadResult } from './load.js';

const LOAD: LoadResult = {
  requests: 10_000,
  durationS: 2,
  rps: 5000,
  non2xx: 3,
  errors: 1,
  timeouts: 0,
  statusCounts: { '200': 9997, '503': 3 },
  latency: { count: 10_000, meanMs: 1.5, p50Ms: 1.2, p90Ms: 2, p99Ms: 4, maxMs: 12 },
  loadgenCpuMs: 800,
  loadgenPeakRssBytes: 120e6,
};

const proc = (cpuMs: number, rss = 90e6) => ({ cpuUserUs: cpuMs * 600, cpuSystemUs: cpuMs * 400, rssBytes: rss / 2, maxRssBytes: rss });

test('a proxy arm: per-component CPU, calls per 1k, cache, evictions, re-runs, duplicates', () => {
  const r = buildArmResult(
    'C',
    'the product',
    LOAD,
    {
      proxy: {
        requests: { total: 10_000 },
        extproc: { streams: 40 },
        cache: { enabled: true, hits: 9960, misses: 40, entries: 50, evictions: { stale: 2, ttl: 30, lru: 0 }, coalesced: { waits: 5, hit: 3, alone: 1, gone: 1 } },
        reruns: { stale: 2, connect: 1 },
        process: proc(1000),
      },
      extproc: { streams: { total: 40, active: 0 }, process: proc(20) },
      'apiserver-stub': { rpc: { ResumeActor: { OK: 38, ABORTED: 2 }, GetActor: { OK: 9 } }, actors: { RUNNING: 50 }, deliveries: { total: 9997, duplicates: 0 }, process: proc(500) },
    },
    { warmupResumeCalls: 50, suspendedAtStart: 0, notes: ['n'], countDuplicates: true },
  );
  assert.equal(r.rps, 5000);
  assert.equal(r.resumeCalls, 40);
  assert.equal(r.extprocStreams, 40, 'taken from extproc /stats');
  assert.equal(r.resumeCallsPer1k, 4);
  assert.equal(r.extprocStreamsPer1k, 4);
  assert.deepEqual(r.components.map((c) => [c.component, c.cpuMsPerRequest]), [
    ['proxy', 0.1],
    ['extproc', 0.002],
    ['apiserver-stub', 0.05],
  ]);
  assert.ok(Math.abs((r.cpuMsPerRequest as number) - 0.152) < 1e-12);
  assert.equal(r.loadgen.cpuMsPerRequest, 0.08);
  assert.equal(r.components[0]!.peakRssBytes, 90e6);
  assert.deepEqual(r.cache, { hits: 9960, misses: 40, coalesced: 3, hitRatio: 0.996, entries: 50, evictions: { stale: 2, ttl: 30, lru: 0 } });
  assert.equal(r.evictions, 32);
  assert.equal(r.reruns, 3);
  assert.equal(r.duplicates, 0);
  assert.equal(r.warmupResumeCalls, 50);
  assert.deepEqual(r.notes, ['n']);
  assert.ok(r.stats && 'proxy' in r.stats, 'the raw /stats bodies travel with the result');
});

test('without extproc stats the proxy counter is used; an arm without ext_proc reports 0, an unknown one null', () => {
  const viaProxy = buildArmResult('A', 'a', LOAD, { proxy: { extproc: { streams: 10_000 }, cache: { enabled: false } } });
  assert.equal(viaProxy.extprocStreams, 10_000);
  assert.equal(viaProxy.cache, undefined, 'no cache block when the cache is off');
  assert.equal(viaProxy.resumeCalls, null, 'no stub stats: unknown');
  assert.equal(viaProxy.cpuMsPerRequest, null, 'no process block: unknown');
  const direct = buildArmResult('direct', 'd', LOAD, { 'apiserver-stub': { rpc: {}, process: proc(100) } }, { noExtproc: true });
  assert.equal(direct.extprocStreams, 0);
  assert.equal(direct.resumeCalls, 0);
  assert.equal(direct.duplicates, undefined, 'duplicates only where request ids are unique');
  const target = buildArmResult('target', 't', LOAD, {});
  assert.equal(target.extprocStreams, null);
  assert.equal(target.extprocStreamsPer1k, null);
});
