import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  changed,
  counterChange,
  FD_RESERVE,
  flattenNumbers,
  hitRatio,
  hitsInWindow,
  HIT_RATIO_TARGET,
  NO_FLOOD,
  overloadCounters,
  overloadTable,
  overloadTargets,
  parseMetrics,
  RSS_TARGET_BYTES,
  shedAndRefused,
  sizeFloods,
} from './overload-report.js';
import { correctnessFailed, evaluateTargets, renderMarkdown } from './report.js';
import type { ArmResult, BenchReport, FloodOutcome, OverloadPhase, OverloadUsage } from './types.js';

const MB = 1024 * 1024;

test('hitsInWindow counts the buckets inside the window, an edge bucket in proportion', () => {
  const b = { startMs: 10_000, bucketMs: 50, ok: [10, 10, 10, 10, 10, 10], non2xx: [0, 2, 0, 0, 0, 0], errors: [0, 0, 0, 0, 4, 0] };
  // [10 050, 10 225): buckets 1, 2, 3 whole, half of bucket 4.
  const w = hitsInWindow(b, 10_050, 10_225);
  assert.deepEqual(w, { ok: 35, non2xx: 2, errors: 2, seconds: 0.175, rps: 35 / 0.175 });
  assert.deepEqual(hitsInWindow(b, 20_000, 21_000), { ok: 0, non2xx: 0, errors: 0, seconds: 1, rps: 0 });
  assert.equal(hitsInWindow(b, 10_100, 10_100).rps, 0, 'an empty window answers 0, not NaN');
});

test('hitRatio: null without a reference that answered', () => {
  assert.equal(hitRatio(800, 1000), 0.8);
  assert.equal(hitRatio(800, 0), null);
  assert.equal(hitRatio(800, null), null);
  assert.equal(hitRatio(null, 1000), null);
});

test('flattenNumbers and parseMetrics read /stats and a Prometheus scrape', () => {
  assert.deepEqual(flattenNumbers({ a: { b: 1, c: 'x', d: [1, 2], e: { f: 2.5 } }, g: true, h: null }), { 'a.b': 1, 'a.e.f': 2.5 });
  const scrape = [
    '# HELP actor_edge_proxy_overload_shed_total Requests shed.',
    '# TYPE actor_edge_proxy_overload_shed_total counter',
    'actor_edge_proxy_overload_shed_total{reason="a b"} 4',
    'actor_edge_proxy_connections_refused_total 7 1700000000000',
    'nodejs_heap_size_total_bytes 123',
    'broken_line',
    '',
  ].join('\n');
  assert.deepEqual(parseMetrics(scrape), {
    'actor_edge_proxy_overload_shed_total{reason="a b"}': 4,
    actor_edge_proxy_connections_refused_total: 7,
    nodejs_heap_size_total_bytes: 123,
  });
});

/** A proxy without an overload manager: only older counters whose names match (the ext_proc retry cap, tunnels). */
const NO_MANAGER_STATS = {
  requests: { total: 100 },
  extproc: { retries: { retried: 0, recovered: 0, budgetExhausted: 0, shed: 0, waiting: 0 } },
  upstream: { outliers: { ejections: { refused: 0, reset: 0 } } },
  tunnels: { upgrade: { refused: 0 }, connect: { refused: 0 } },
};
const NO_MANAGER_METRICS = 'actor_edge_proxy_extproc_retry_outcomes_total{outcome="shed"} 0\nactor_edge_proxy_tunnels_refused_total{kind="upgrade"} 0\nactor_edge_proxy_requests_total{code="200"} 100\n';

test('a proxy without an overload manager: shed and refused are null; its other counters are listed when they change', () => {
  const before = overloadCounters(NO_MANAGER_STATS, NO_MANAGER_METRICS);
  assert.equal(before['stats:requests.total'], undefined, 'only names about overload are kept');
  assert.equal(before['stats:extproc.retries.shed'], 0);
  const later = { ...NO_MANAGER_STATS, extproc: { retries: { ...NO_MANAGER_STATS.extproc.retries, shed: 2 } }, tunnels: { upgrade: { refused: 3 }, connect: { refused: 0 } } };
  const change = counterChange(before, overloadCounters(later, NO_MANAGER_METRICS));
  assert.deepEqual(shedAndRefused(change), { shed: null, refused: null }, 'the ext_proc retry cap and tunnel refusals are not the manager\'s');
  assert.deepEqual(changed(change), { 'stats:extproc.retries.shed': 2, 'stats:tunnels.upgrade.refused': 3 });
  assert.deepEqual(shedAndRefused({}), { shed: null, refused: null });
});

/** The overload manager's /stats block, as the proxy reports it. */
function managerStats(shed: { full: number; timeout: number }, refused: { limit: number; overload: number }, transitions = 0) {
  return {
    ...NO_MANAGER_STATS,
    overload: {
      state: 'normal',
      level: 0,
      transitions: { normal: transitions, 'shed-misses': transitions, 'shed-all': 0 },
      monitors: { loopDelayMs: { reading: 0.2, shedMisses: 500, shedAll: 2000 }, heapUsedBytes: { reading: 1e8, shedMisses: 268435456, shedAll: 335544320 } },
      shed: { overloadMiss: 0, overloadAll: 0, extprocQueueTimeout: shed.timeout, extprocQueueFull: shed.full, replayBudget: 0 },
      connections: { open: 3, max: 20000, refused: refused },
      replay: { budgetBytes: 67108864, inUseBytes: 0, bodies: 0, streamedWithoutReplay: 0 },
      extprocQueue: { maxStreams: 256, maxWaiting: 1024, timeoutMs: 1000, inFlight: 0, waiting: 0, queued: 0 },
    },
  };
}

test('a proxy with an overload manager: what it shed and refused over the phase, /stats first, /metrics else', () => {
  const before = overloadCounters(managerStats({ full: 1, timeout: 1 }, { limit: 0, overload: 2 }), null);
  const after = overloadCounters(managerStats({ full: 3514, timeout: 779 }, { limit: 5, overload: 4 }, 2), 'actor_edge_proxy_shed_total{reason="x"} 99\n');
  const change = counterChange(before, after);
  assert.deepEqual(shedAndRefused(change), { shed: 4291, refused: 7 }, 'state transitions and thresholds named shed-… are not sheds');
  assert.equal(changed(change)['stats:overload.shed.extprocQueueFull'], 3513);
  assert.equal(changed(change)['stats:overload.monitors.loopDelayMs.shedMisses'], undefined, 'unchanged: left out');
  const unchanged = counterChange(before, before);
  assert.deepEqual(shedAndRefused(unchanged), { shed: 0, refused: 0 }, 'a manager that shed nothing: 0, not null');
  assert.deepEqual(changed(unchanged), {});
  // Only /metrics has them: the same from there.
  const m = (full: number, refusedLimit: number) =>
    [
      `actor_edge_proxy_shed_total{reason="extproc_queue_full"} ${full}`,
      'actor_edge_proxy_shed_total{reason="replay_budget"} 1',
      `actor_edge_proxy_connections_refused_total{reason="limit"} ${refusedLimit}`,
      'actor_edge_proxy_overload_transitions_total{state="shed-misses"} 3',
    ].join('\n');
  const fromMetrics = counterChange(overloadCounters(NO_MANAGER_STATS, m(1, 0)), overloadCounters(NO_MANAGER_STATS, m(6, 2)));
  assert.deepEqual(shedAndRefused(fromMetrics), { shed: 5, refused: 2 });
});

test('sizeFloods: the limits allow the sizes, or cut them with a note', () => {
  const requested = { idle: 10_000, slowloris: 2_000, uploads: 1_000, cold: 5_000 };
  const roomy = { soft: 20_000, hard: 20_000 };
  assert.deepEqual(sizeFloods(requested, { bench: roomy, proxy: roomy, stub: roomy }), { sizes: requested, notes: [] });
  assert.deepEqual(sizeFloods(requested, { bench: null, proxy: null, stub: null }).sizes, requested, 'unknown limits cut nothing');
  const tight = sizeFloods(requested, { bench: roomy, proxy: { soft: 8192, hard: 8192 }, stub: { soft: 4096, hard: 4096 } });
  assert.deepEqual(tight.sizes, { idle: 8192 - FD_RESERVE, slowloris: 2_000, uploads: 1_000, cold: 4096 - FD_RESERVE }, 'cold: the stub holds one per request');
  assert.equal(tight.notes.length, 2);
  assert.match(tight.notes[0]!, /^idle: sized down from 10,000 to 7,168 .*proxy 8192/);
  assert.match(tight.notes[1]!, /^cold: sized down from 5,000 to 3,072 .*stub 4096/);
});

function flood(kind: FloodOutcome['kind'], extra: Partial<FloodOutcome> = {}): FloodOutcome {
  return {
    kind,
    planned: 100,
    attempted: 100,
    connected: 100,
    connectErrors: {},
    requests: 0,
    statusCounts: {},
    retryAfter: 0,
    errors: {},
    closedByProxy: 0,
    openAtEnd: 100,
    inFlightAtEnd: 0,
    bytesSent: 0,
    setupMs: 50,
    durationMs: 3000,
    ...extra,
  };
}

function phase(name: string, f: FloodOutcome | null, rps: number, ratio: number | null, peakMb: number | null, extra: Partial<OverloadPhase> = {}): OverloadPhase {
  return {
    name,
    description: name,
    flood: f,
    windowS: 10,
    hits: { ok: rps * 10, rps, non2xx: 0, errors: 0, ratio, beforeRps: 4900 },
    rss: { peakBytes: peakMb === null ? null : peakMb * MB, startBytes: 110 * MB, endBytes: 120 * MB, afterBytes: 115 * MB, samples: 100, hwmReset: true },
    shed: null,
    refused: null,
    proxyCounters: {},
    process: { pid: 42, pidAfter: 42, alive: true, restarted: false },
    ...extra,
  };
}

/** Numbers as recorded by a run without budgets: the uploads blow the memory target, the storm the hits. */
function recorded(): OverloadUsage {
  return {
    phases: [
      phase(NO_FLOOD, null, 5000, null, 130),
      phase('(a) idle connections', flood('idle'), 4600, 0.92, 180),
      phase('(b) slowloris', flood('slowloris', { bytesSent: 2000 }), 4100, 0.82, 140),
      phase('(c) slow uploads', flood('uploads', { requests: 2000, statusCounts: { '200': 1000 }, inFlightAtEnd: 100, openAtEnd: 0 }), 3000, 0.6, 1250, {
        shed: 0,
        refused: 12,
        proxyCounters: { 'stats:overload.shed': 0 },
      }),
      phase('(d) cold storm', flood('cold', { statusCounts: { '200': 80, '503': 20 }, retryAfter: 20, errors: { timeout: 1 } }), 100, 0.02, null, {
        process: { pid: 42, pidAfter: 43, alive: true, restarted: true },
      }),
    ],
    requested: { idle: 100, slowloris: 100, uploads: 100, cold: 100 },
    sizes: { idle: 100, slowloris: 100, uploads: 100, cold: 100 },
    hotActors: 4,
    hitRate: 1000,
    uploadActors: 16,
    uploadBytes: MB,
    uploadDelayMs: 3000,
    slowlorisIntervalMs: 500,
    fdLimits: { bench: { soft: 20_000, hard: 20_000 }, proxy: { soft: 20_000, hard: 20_000 } },
    rssTargetBytes: RSS_TARGET_BYTES,
    hitRatioTarget: HIT_RATIO_TARGET,
  };
}

function overloadArm(o: OverloadUsage): ArmResult {
  return {
    name: 'C',
    description: 'arm C',
    requests: 50_000,
    durationS: 10,
    rps: 5000,
    p50Ms: 1,
    p90Ms: 2,
    p99Ms: 3,
    maxMs: 9,
    meanMs: 1.2,
    non2xx: 0,
    errors: 0,
    statusCounts: { '200': 50_000 },
    resumeCalls: 4,
    extprocStreams: 4,
    resumeCallsPer1k: 0.08,
    extprocStreamsPer1k: 0.08,
    cpuMsPerRequest: 0.1,
    components: [],
    loadgen: { component: 'loadgen', cpuMs: 1, cpuMsPerRequest: 0.01, peakRssBytes: 1 },
    overload: o,
    notes: [],
  };
}

test('overload targets on recorded numbers: peak RSS, hits against the no-flood rate, no restart', () => {
  const targets = overloadTargets([overloadArm(recorded())]);
  const byName = new Map(targets.map((t) => [t.name, t]));
  const status = (name: string) => byName.get(`C: ${name}`)?.status;
  assert.equal(status('no flood: proxy peak RSS < 256 MB'), 'met');
  assert.equal(status("no flood: the hit load's offered rate"), 'reported');
  assert.match(byName.get("C: no flood: the hit load's offered rate")!.detail, /^5,000 of 1,000 hits\/s offered \(500%\)$/);
  assert.equal([...byName.keys()].filter((n) => n.startsWith('C: no flood: hits')).length, 0, 'the reference has no hit target');
  assert.equal(status('(a) idle connections: hits >= 80% of the no-flood rate'), 'met');
  assert.equal(status('(b) slowloris: hits >= 80% of the no-flood rate'), 'met', '82% of the no-flood rate');
  assert.equal(status('(c) slow uploads: proxy peak RSS < 256 MB'), 'not-met');
  assert.match(byName.get('C: (c) slow uploads: proxy peak RSS < 256 MB')!.detail, /^peak 1250 MB \(VmHWM reset at the phase's start\) against 256 MB; 110 MB at the start, 115 MB after the flood/);
  assert.equal(status('(c) slow uploads: hits >= 80% of the no-flood rate'), 'not-met');
  assert.match(byName.get('C: (c) slow uploads: hits >= 80% of the no-flood rate')!.detail, /^3,000 hits\/s over 10\.0 s = 60% of 5,000 hits\/s with no flood/);
  assert.equal(status('(d) cold storm: proxy peak RSS < 256 MB'), 'n/a', 'no sample: neither met nor not met');
  const restart = byName.get('C: (d) cold storm: the proxy neither restarted nor died')!;
  assert.equal(restart.status, 'not-met');
  assert.equal(restart.correctness, true);
  assert.equal(restart.detail, 'restarted (pid 42 → 43)');
  assert.ok(correctnessFailed(targets), 'a restart fails the run');
  // no flood: 3, (a)–(c): 3 each, (d): 3; the speed and memory ones never fail the run by themselves.
  assert.equal(targets.length, 3 + 3 * 4);
  const calm = recorded();
  const survived = { ...calm, phases: calm.phases.map((p) => ({ ...p, process: { pid: 42, pidAfter: 42, alive: true, restarted: false } })) };
  assert.equal(correctnessFailed(overloadTargets([overloadArm(survived)])), false);
});

test('a dead proxy and a phase that did not run are correctness failures', () => {
  const o = recorded();
  const dead = { ...(o.phases[1] as OverloadPhase), process: { pid: 42, pidAfter: null, alive: false, restarted: false } };
  const skipped = { ...(o.phases[2] as OverloadPhase), skipped: 'failed: proxy not ready within 30000 ms' };
  const targets = overloadTargets([overloadArm({ ...o, phases: [o.phases[0] as OverloadPhase, dead, skipped] })]);
  const gone = targets.find((t) => t.name === 'C: (a) idle connections: the proxy neither restarted nor died')!;
  assert.deepEqual([gone.status, gone.detail], ['not-met', 'pid 42 gone']);
  const ran = targets.find((t) => t.name === 'C: (b) slowloris: ran')!;
  assert.deepEqual([ran.status, ran.correctness, ran.detail], ['not-met', true, 'failed: proxy not ready within 30000 ms']);
  assert.equal(targets.filter((t) => t.name.startsWith('C: (b)')).length, 1);
  // Without a no-flood phase there is no reference.
  const alone = overloadTargets([overloadArm({ ...o, phases: [{ ...(o.phases[1] as OverloadPhase), hits: { ...o.phases[1]!.hits, ratio: null } }] })]);
  assert.equal(alone.find((t) => t.name.includes('hits'))!.status, 'n/a');
});

test('the overload table and the report: one row per phase, absent counters as null', () => {
  const arm = overloadArm(recorded());
  const t = overloadTable([arm]);
  const rows = t.split('\n');
  assert.equal(rows.length, 2 + 5);
  assert.match(rows[0]!, /^\| arm \| phase \| flood \| window s \| hits\/s \| of no flood \| hits\/s just before \| hit p50 \/ p99 ms \| proxy peak RSS MB \|/);
  assert.equal(rows[2], '| C | no flood | – | 10.0 | 5,000 | – | 4,900 | – | 130 | 115 | null | null | – | – | – | – | – | – | pid 42 alive, same pid after |');
  assert.equal(rows[5], '| C | (c) slow uploads | 100 uploads (2,000 POSTs) | 10.0 | 3,000 | 60% | 4,900 | – | 1250 | 115 | 0 | 12 | 200×1000 | 0 | – | – | 0 | 0 / 100 | pid 42 alive, same pid after |');
  assert.match(rows[6]!, /^\| C \| \(d\) cold storm \| 100 cold actors \(100 connected\) \| 10\.0 \| 100 \| 2\.0% \| 4,900 \| – \| – \| 115 \| null \| null \| 200×80 503×20 \| 20 \| timeout 1 \|/);
  const report: BenchReport = {
    scenario: 'overload',
    startedAt: '2026-01-02T03:04:05.000Z',
    machine: { cpus: 2, cpuModel: 'cpu', totalMemBytes: 2 ** 34, platform: 'Linux', node: 'v20', loadAvg: [0, 0, 0] },
    settings: {},
    arms: [arm],
    ratios: {},
    targets: evaluateTargets('overload', [arm], { actors: 5020, cacheTtlMs: 5000 }),
  };
  const md = renderMarkdown(report);
  assert.ok(md.includes(t), 'the markdown carries the overload table');
  assert.match(md, /- C: \(c\) slow uploads: proxy peak RSS < 256 MB: \*\*not met\*\*\. peak 1250 MB/);
  const busy = recorded();
  const slow = { ...busy, phases: [{ ...(busy.phases[0] as OverloadPhase), hits: { ...busy.phases[0]!.hits, rps: 577 } }] };
  assert.match(overloadTargets([overloadArm(slow)])[0]!.detail, /^577 of 1,000 hits\/s offered \(58%\): below 90%, the machine was too busy/);
});
