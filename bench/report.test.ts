import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  computeRatios,
  correctnessFailed,
  evaluateTargets,
  fileStem,
  GRPC_OVERLAP_TARGET,
  mainTable,
  per1k,
  ratio,
  renderMarkdown,
  resumeCallBound,
  summaryTable,
} from './report.js';
import type { ArmName, ArmResult, BenchReport } from './types.js';

function arm(name: ArmName, rps: number, extra: Partial<ArmResult> = {}): ArmResult {
  const requests = rps * 20;
  return {
    name,
    description: `arm ${name}`,
    requests,
    durationS: 20,
    rps,
    p50Ms: 0.4,
    p90Ms: 0.6,
    p99Ms: 1.2,
    maxMs: 9,
    meanMs: 0.45,
    non2xx: 0,
    errors: 0,
    statusCounts: { '200': requests },
    resumeCalls: null,
    extprocStreams: null,
    resumeCallsPer1k: null,
    extprocStreamsPer1k: null,
    cpuMsPerRequest: 0.1,
    components: [{ component: 'proxy', cpuMs: 100, cpuMsPerRequest: 0.05, peakRssBytes: 80 * 2 ** 20 }],
    loadgen: { component: 'loadgen', cpuMs: 50, cpuMsPerRequest: 0.02, peakRssBytes: 100 * 2 ** 20 },
    notes: [],
    ...extra,
  };
}

test('ratio and per1k handle missing and zero denominators', () => {
  assert.equal(ratio(10, 4), 2.5);
  assert.equal(ratio(10, 0), null);
  assert.equal(ratio(undefined, 4), null);
  assert.equal(ratio(null, 4), null);
  assert.equal(per1k(262, 855_320), (262 * 1000) / 855_320);
  assert.equal(per1k(null, 10), null);
  assert.equal(per1k(5, 0), null);
});

test('computeRatios divides throughput of the named arms, null when one is missing', () => {
  const r = computeRatios([arm('A', 1000), arm('B2', 9000), arm('C', 8000), arm('floor', 10_000)]);
  assert.equal(r['C/A'], 8);
  assert.equal(r['B2/A'], 9);
  assert.ok(Math.abs((r['C/B2'] as number) - 8 / 9) < 1e-12);
  assert.equal(r['C/floor'], 0.8);
  assert.equal(r['C/direct'], null);
  assert.equal(r['B1/A'], null);
});

test('resumeCallBound: one call per actor per TTL window touched, plus cold calls', () => {
  assert.equal(resumeCallBound(50, 20, 5000, 0), 200);
  assert.equal(resumeCallBound(50, 20.04, 5000, 0), 250);
  assert.equal(resumeCallBound(50, 2, 5000, 3), 53);
});

test('steady targets: C against the floor (throughput and CPU), C/A reported, the ResumeActor bound', () => {
  const a = arm('A', 1000, { resumeCallsPer1k: 1000 });
  const met = evaluateTargets('steady', [a, arm('floor', 10_000), arm('C', 9600, { resumeCalls: 180, resumeCallsPer1k: 0.9 })], { actors: 50, cacheTtlMs: 5000 });
  assert.deepEqual(met.map((t) => t.status), ['met', 'met', 'reported', 'met']);
  assert.match(met[0]!.detail, /96%/);
  assert.match(met[0]!.detail, /proxy 0\.050 ms vs floor 0\.050 ms/);
  assert.match(met[1]!.detail, /^1\.00x/);
  assert.match(met[2]!.detail, /9\.60x/);
  assert.match(met[3]!.detail, /= 0\.90 per actor per TTL/);
  const costly = { components: [{ component: 'proxy', cpuMs: 120, cpuMsPerRequest: 0.056, peakRssBytes: 1 }] };
  const missed = evaluateTargets('steady', [a, arm('floor', 10_000), arm('C', 9000, { resumeCalls: 201, ...costly })], { actors: 50, cacheTtlMs: 5000 });
  assert.deepEqual(missed.map((t) => t.status), ['not-met', 'not-met', 'reported', 'not-met']);
  assert.match(missed[1]!.detail, /^1\.12x/);
  const lonely = evaluateTargets('steady', [arm('C', 9000)], { actors: 50, cacheTtlMs: 5000 });
  assert.deepEqual(lonely.map((t) => t.status), ['n/a', 'n/a', 'n/a', 'n/a']);
  const deployed = evaluateTargets('steady', [arm('target', 9000, { resumeCalls: 150 })], { actors: 50, cacheTtlMs: 5000 });
  assert.equal(deployed[3]!.status, 'met', '--target is judged by the same ResumeActor bound');
});

test('churn targets: non-2xx and duplicates per arm; duplicates are a correctness failure', () => {
  const t = evaluateTargets('churn', [arm('C', 5000, { duplicates: 0, non2xx: 2 }), arm('A', 900, { duplicates: 1 })], { actors: 50, cacheTtlMs: 5000 });
  assert.deepEqual(
    t.map((x) => [x.name, x.status]),
    [
      ['C: client-visible non-2xx = 0', 'not-met'],
      ['C: duplicate deliveries = 0', 'met'],
      ['A: client-visible non-2xx = 0', 'met'],
      ['A: duplicate deliveries = 0', 'not-met'],
    ],
  );
  assert.equal(correctnessFailed(t), true);
  assert.equal(correctnessFailed(t.slice(0, 3)), false);
});

test('steady-post targets: the churn columns without the churn', () => {
  const t = evaluateTargets('steady-post', [arm('C', 5000, { duplicates: 0 })], { actors: 50, cacheTtlMs: 5000 });
  assert.deepEqual(t.map((x) => x.status), ['met', 'met']);
});

test('cold target: one ResumeActor per actor and every actor answered', () => {
  const cold = { actors: 50, actorsAnswered: 50, firstSuccessP50Ms: 60, firstSuccessP99Ms: 80, firstSuccessMaxMs: 90, resumeCallsPerActor: 1, resumeOkPerActor: 1, concurrentPerActor: 8 };
  const t = evaluateTargets('cold', [arm('C', 100, { resumeCalls: 50, cold }), arm('A', 100, { resumeCalls: 75, cold: { ...cold, resumeCallsPerActor: 1.5 } })], { actors: 50, cacheTtlMs: 5000 });
  assert.deepEqual(t.map((x) => x.status), ['met', 'not-met']);
});

test('grpc targets: the K calls overlap when a round takes at most 2x one call; unary calls answered while the stream is open', () => {
  const usage = (wallP50Ms: number, open: boolean[]): Partial<ArmResult> => ({
    grpc: {
      worker: '127.1.0.1', streamActor: 'a', unaryActor: 'b', concurrency: 10, repliesPerCall: 40, replyIntervalMs: 5,
      aloneMs: [200], aloneP50Ms: 200, rounds: [], wallP50Ms, wallPerCall: wallP50Ms / 200, overlap: 2000 / wallP50Ms, durationOverlap: 2000 / wallP50Ms,
      longStreamReplies: 200, unaryAloneP50Ms: 2,
      unaryWhileStreaming: open.map((streamOpen) => ({ latencyMs: streamOpen ? 3 : 1000, ok: true, streamOpen })),
      unaryWhileStreamingP50Ms: 3, unaryWhileStreamingMaxMs: 1000,
    },
  });
  const t = evaluateTargets('grpc', [arm('direct', 50, usage(210, [true, true])), arm('C', 5, usage(2000, [true, false])), arm('A', 5, usage(GRPC_OVERLAP_TARGET * 200, []))], { actors: 2, cacheTtlMs: 5000 });
  assert.deepEqual(t.map((x) => [x.name, x.status]), [
    ['direct: 10 concurrent streaming calls to one worker overlap (wall time <= 2x one call)', 'met'],
    ['direct: a unary call to the same worker is answered while a stream is open', 'met'],
    ['C: 10 concurrent streaming calls to one worker overlap (wall time <= 2x one call)', 'not-met'],
    ['C: a unary call to the same worker is answered while a stream is open', 'not-met'],
    ['A: 10 concurrent streaming calls to one worker overlap (wall time <= 2x one call)', 'met'],
    ['A: a unary call to the same worker is answered while a stream is open', 'not-met'],
  ]);
  assert.match(t[2]!.detail, /10\.00x one call alone .* overlap ratio 1\.00/);
  assert.match(t[3]!.detail, /^1\/2 answered OK/);
  const md = renderMarkdown({ scenario: 'grpc', startedAt: '2025-01-02T03:04:05.000Z', machine: { cpus: 2, cpuModel: 'x', totalMemBytes: 2 ** 30, platform: 'p', node: 'v20', loadAvg: [0] }, settings: {}, arms: [arm('C', 5, usage(2000, [true, false]))], ratios: {}, targets: t });
  assert.match(md, /\| C \| 100 \| 0 \| 200×100 \| 200\.0 \| 10 \| 2000\.0 \| 10\.00 \| 1\.00 \| 1\.00 \| 2\.0 \| 3\.0 \| 1000\.0 \| 1\/2 \|/);
});

test('the markdown carries the machine, every arm, the ratios and the targets', () => {
  const arms = [arm('A', 1000, { resumeCalls: 20_000, resumeCallsPer1k: 1000 }), arm('C', 8000, { resumeCalls: 200, resumeCallsPer1k: 1.25 })];
  const report: BenchReport = {
    scenario: 'steady',
    startedAt: '2025-03-04T05:06:07.891Z',
    machine: { cpus: 2, cpuModel: 'Test CPU', totalMemBytes: 8 * 2 ** 30, platform: 'Linux', node: 'v20.0.0', loadAvg: [0.5, 0.4, 0.3] },
    settings: { connections: 8, arms: ['A', 'C'] },
    arms,
    ratios: computeRatios(arms),
    targets: evaluateTargets('steady', arms, { actors: 50, cacheTtlMs: 5000 }),
  };
  const md = renderMarkdown(report);
  assert.match(md, /2 × Test CPU, 8\.0 GiB/);
  assert.match(md, /\| A \| 1,000 \| 0\.40 \|/);
  assert.match(md, /\| C \| 8,000 \|/);
  assert.match(md, /C\/A 8\.00/);
  assert.match(md, /- C >= 95% of floor: n\/a\. needs arms C and floor/);
  assert.match(md, /- C ResumeActor calls 200 \(target ≤ \d+: 1 per actor per TTL \+ cold calls\): met\. 200 calls in/, 'the measured value, its bound, the verdict');
  assert.match(md, /- C throughput 8\.00× A's: reported\./);
  assert.match(md, /Targets: what this run measured, what it is compared against, and whether it is met\./);
  // The legend: what each arm of the run is.
  assert.match(md, /Arms:\n\n- `A`: proxy, cache off: ext_proc \+ ResumeActor per request\n- `C`: proxy, cache on, misses through ext_proc \(the product\)\n/);
  const lines = mainTable(arms).split('\n');
  assert.equal(lines.length, 4);
  const cols = (l: string): number => l.split('|').length;
  assert.ok(lines.every((l) => cols(l) === cols(lines[0]!)), 'every table row has the header\'s column count');
});

test('summaryTable: one row per arm, the proxy CPU in its own column', () => {
  const t = summaryTable([arm('C', 8000, { resumeCallsPer1k: 1.25, extprocStreamsPer1k: 1.5 })]).split('\n');
  assert.equal(t.length, 3);
  assert.equal(t[2], '| C | 8,000 | 0.40 | 1.20 | 1.3 | 1.5 | 0.100 | 0.050 |');
});

test('fileStem is sortable and has no colons', () => {
  assert.equal(fileStem('2025-03-04T05:06:07.891Z', 'steady'), '2025-03-04T05-06-07Z-steady');
});

function phase(name: 'kill' | 'rollout' | 'scale', extra: Partial<NonNullable<ArmResult['phases']>[number]> = {}): NonNullable<ArmResult['phases']>[number] {
  return { name, description: name, durationS: 5, requests: 1000, getErrors: 0, postErrors: 0, errors: 0, non2xx: 0, duplicates: 0, actorsMoved: 12, resumeCalls: 60, baselineResumeCalls: 48, statusCounts: { '200': 1000 }, ...extra };
}

function fleetArms(affinity: number, rr: number, phases = [phase('kill', { postErrors: 2, errors: 2 }), phase('rollout'), phase('scale')]): ArmResult[] {
  const usage = (mode: 'affinity' | 'roundrobin' | 'sni') => ({ mode, replicas: 3, actorsByReplica: {}, coalesced: mode === 'sni' ? 40 : 0, misdirected: mode === 'sni' ? 40 : 0 });
  return [
    arm('fleet-affinity', 500, { resumeCalls: 200, resumeCallsPerActorPerTtl: affinity, duplicates: 0, fleet: usage('affinity'), phases }),
    arm('fleet-rr', 400, { resumeCalls: 400, resumeCallsPerActorPerTtl: rr, duplicates: 0, fleet: usage('roundrobin') }),
    arm('fleet-sni', 450, { resumeCalls: 200, resumeCallsPerActorPerTtl: 1.0, duplicates: 0, fleet: usage('sni') }),
  ];
}

test('fleet targets: affinity bound, the multiplication without affinity, kill GETs, rollout errors and duplicates, 421s; all correctness', () => {
  const good = evaluateTargets('fleet', fleetArms(1.02, 2.6), { actors: 48, cacheTtlMs: 1000 });
  assert.ok(good.every((t) => t.status !== 'not-met'), JSON.stringify(good.filter((t) => t.status === 'not-met')));
  assert.equal(correctnessFailed(good), false);
  const named = (ts: typeof good, prefix: string) => ts.find((t) => t.name.startsWith(prefix));
  assert.equal(named(good, 'kill: POST failures')?.status, 'reported', 'POSTs in flight at a killed replica may fail');
  assert.match(named(good, 'scale:')?.detail ?? '', /12 actors moved.*12 extra/);

  const spill = evaluateTargets('fleet', fleetArms(1.5, 2.6), { actors: 48, cacheTtlMs: 1000 });
  assert.equal(named(spill, 'fleet-affinity: ResumeActor')?.status, 'not-met');
  assert.equal(named(spill, 'fleet-rr:')?.status, 'not-met', '2.6 is not 2x of 1.5');
  assert.equal(correctnessFailed(spill), true);

  const broken = evaluateTargets('fleet', fleetArms(1.0, 3, [phase('kill', { getErrors: 1 }), phase('rollout', { errors: 1, duplicates: 1 }), phase('scale')]), { actors: 48, cacheTtlMs: 1000 });
  for (const prefix of ['kill: no GET fails', 'rollout: no client error', 'rollout: duplicate', 'fleet-affinity: duplicate']) assert.equal(named(broken, prefix)?.status, 'not-met', prefix);
});

test('fleet report: per-arm and per-phase tables', () => {
  const report: BenchReport = {
    scenario: 'fleet',
    startedAt: '2026-01-01T00:00:00.000Z',
    machine: { cpus: 2, cpuModel: 'cpu', totalMemBytes: 2 ** 30, platform: 'linux', node: 'v20', loadAvg: [0, 0, 0] },
    settings: {},
    arms: fleetArms(1.02, 2.6),
    ratios: {},
    targets: [],
  };
  const md = renderMarkdown(report);
  assert.match(md, /\| fleet-affinity \| kill \| 5\.0 \| 1,000 \| 0 \| 2 \| 2 \| 0 \| 0 \| 12 \| 60 \| 48 \| 200×1000 \|/);
  assert.match(md, /\| fleet-sni \| 3 \| – \| 450 \| 0 \| 0 \| 200 \| 1\.00 \| 40 → 40 \|/);
});
