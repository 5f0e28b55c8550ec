import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterOffloadOf, heavyTable, heavyTargets, heavyUsage, perCallOverheadMs } from './heavy-report.js';
import type { MixedLoadResult } from './heavy-load.js';
import type { ArmResult } from './types.js';

const latency = (p50: number, p99: number) => ({ count: 1, meanMs: p50, p50Ms: p50, p90Ms: p99, p99Ms: p99, maxMs: p99 });
const kind = (requests: number, p50: number, p99: number) => ({ requests, non2xx: 0, errors: 0, statusCounts: { '200': requests }, latency: latency(p50, p99) });

function load(hitP99: number): MixedLoadResult {
  return {
    all: { requests: 1000, durationS: 2, rps: 500, non2xx: 0, errors: 0, timeouts: 0, statusCounts: { '200': 1000 }, latency: latency(1, hitP99), loadgenCpuMs: 1, loadgenPeakRssBytes: 1 },
    hit: kind(900, 1, hitP99),
    heavy: kind(100, 3, 9),
  };
}

const stats = (pool: number, inline: number, workers: number) => ({ filterOffload: { workers: { configured: workers, running: workers }, backlog: { waiting: 0, limit: 64 }, calls: { pool, inline }, stale: 0, errors: 0 } });
const SETUP = { offeredRate: 500, heavyEvery: 10, rounds: 1000, workMs: 2 };

function arm(name: string, hitP99: number, proxyCpuMs: number, proxyStats: unknown): ArmResult {
  return {
    name: name as ArmResult['name'], description: '', requests: 1000, durationS: 2, rps: 500, p50Ms: 1, p90Ms: 2, p99Ms: hitP99, maxMs: hitP99, meanMs: 1, non2xx: 0, errors: 0,
    statusCounts: { '200': 1000 }, resumeCalls: 0, extprocStreams: 0, resumeCallsPer1k: 0, extprocStreamsPer1k: 0, cpuMsPerRequest: 0.5,
    components: [{ component: 'proxy', cpuMs: proxyCpuMs, cpuMsPerRequest: proxyCpuMs / 1000, peakRssBytes: 1 }],
    loadgen: { component: 'loadgen', cpuMs: 0, cpuMsPerRequest: 0, peakRssBytes: 0 }, notes: [],
    heavyFilter: heavyUsage(load(hitP99), proxyStats, SETUP),
  };
}

test('the usage: each kind\'s rate over the load\'s seconds, the errors of both kinds, the filter offload counts', () => {
  const u = heavyUsage(load(4), stats(98, 2, 1), SETUP);
  assert.deepEqual(u.hits, { requests: 900, rps: 450, p50Ms: 1, p99Ms: 4, non2xx: 0, errors: 0 });
  assert.equal(u.heavy.rps, 50);
  assert.equal(u.errors, 0);
  assert.deepEqual(u.filterOffload, { pool: 98, inline: 2, stale: 0, errors: 0, workers: 1 });
  assert.equal(filterOffloadOf({}), null, 'a proxy without the block');
});

test('the target: met at 2× heavy-none\'s hits p99, not met above; the inline ratio and the per-call overhead reported; n/a without the arms', () => {
  const none = arm('heavy-none', 4, 500, stats(0, 0, 0));
  const inline = arm('heavy-inline', 20, 700, stats(0, 100, 0));
  const met = heavyTargets([none, inline, arm('heavy-offload', 8, 760, stats(100, 0, 1))]);
  assert.deepEqual(met.map((t) => t.status), ['met', 'reported', 'reported']);
  assert.match(met[0]?.measured ?? '', /2\.00× heavy-none's/);
  assert.match(met[1]?.measured ?? '', /5\.00× heavy-none's/);
  assert.match(met[2]?.measured ?? '', /0\.600 ms of proxy CPU per offloaded call/);
  assert.equal(heavyTargets([none, arm('heavy-offload', 8.01, 760, stats(100, 0, 1))])[0]?.status, 'not-met');
  assert.deepEqual(heavyTargets([inline]).map((t) => t.status), ['n/a', 'n/a', 'n/a']);
  assert.equal(perCallOverheadMs(inline, undefined), null);
  assert.match(heavyTable([inline]), /\| heavy-inline \| 450 \| 1\.00 \/ 20\.00 \| 50 \| 3\.00 \/ 9\.00 \| 0 \| 0 \/ 100 \| 0 \| 0 \| 0\.700 \|/);
});
