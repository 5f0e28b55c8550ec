/**
 * The benchmark's end-to-end checks (`report-checks.ts`) on reports recorded from real runs
 * (`testing/fixtures/`, written by `testing/record-fixtures.ts`): each recorded report passes, and each check
 * fails on a copy broken the way it guards against. `.ci/run` applies the same checks to live runs
 * (`check-report.ts`, tested at the end).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderMarkdown, targetLine } from './report.js';
import { renderChart } from './chart.js';
import { armDescription } from './legend.js';
import { checkReportText } from './report-text-checks.js';
import { checkEgressReport, checkHeavyFilterReport, checkFaultsReport, checkFleetReport, checkGrpcReport, checkReport, checkSideBySideReport, checkSteadyReport, grpcCallCount } from './report-checks.js';
import { renderSideBySide, type SideBySideReport } from './side-by-side.js';
import { FIXTURE_RUNS, FIXTURES } from './testing/record-fixtures.js';
import type { ArmResult, BenchReport } from './types.js';

type DeepMutable<T> = T extends readonly (infer U)[] ? DeepMutable<U>[] : T extends object ? { -readonly [K in keyof T]: DeepMutable<T[K]> } : T;
type Report = DeepMutable<BenchReport>;
type Arm = DeepMutable<ArmResult>;

const read = <T>(name: string): T => JSON.parse(readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')) as T;
const fixture = (name: string): Report => read<Report>(name);

/** A copy of `report` changed by `edit`. */
function broken<T>(report: T, edit: (copy: DeepMutable<T>) => void): T {
  const copy = structuredClone(report) as DeepMutable<T>;
  edit(copy);
  return copy as T;
}

function armOf(r: Report, name: string): Arm {
  const a = r.arms.find((x) => x.name === name);
  assert.ok(a, `the fixture has arm ${name}`);
  return a;
}

const steady = (r: Report): string => checkSteadyReport(r as BenchReport).join('\n');
const faults = (r: Report): string => checkFaultsReport(r as BenchReport).join('\n');
const grpc = (r: Report): string => checkGrpcReport(r as BenchReport).join('\n');
const fleet = (r: Report): string => checkFleetReport(r as BenchReport).join('\n');
const sbs = (r: SideBySideReport): string => checkSideBySideReport(r).join('\n');

/** The load's concurrency and hot actors in the steady fixtures (the benchmark's defaults). */
const CONNECTIONS = 8;
const ACTORS = 50;

test('every recorded report passes the checks of its scenario, and holds what the checks read', () => {
  assert.deepEqual(FIXTURE_RUNS.map((f) => f.name).sort(), ['egress', 'faults', 'fleet', 'grpc', 'heavy-filter', 'side-by-side', 'steady-C-mtls', 'steady-floor-C', 'steady-h2load', 'steady-quick', 'steady-tracing']);
  for (const f of FIXTURE_RUNS) assert.deepEqual(checkReport(f.scenario, read(f.name)), [], f.name);
  assert.deepEqual(checkSteadyReport(fixture('steady-floor-C') as BenchReport), []);
  assert.deepEqual(checkSteadyReport(fixture('steady-quick') as BenchReport), []);
  assert.deepEqual(checkSteadyReport(fixture('steady-C-mtls') as BenchReport), []);
  assert.deepEqual(checkSteadyReport(fixture('steady-h2load') as BenchReport), []);
  assert.deepEqual(checkSteadyReport(fixture('steady-tracing') as BenchReport), []);
  assert.deepEqual(checkFaultsReport(fixture('faults') as BenchReport), []);
  assert.deepEqual(checkGrpcReport(fixture('grpc') as BenchReport), []);
  assert.deepEqual(checkFleetReport(fixture('fleet') as BenchReport), []);
  assert.deepEqual(checkSideBySideReport(read<SideBySideReport>('side-by-side')), []);
  // Trimmed of the raw /stats bodies, never of what a check reads; no machine paths.
  for (const f of FIXTURE_RUNS) {
    const text = readFileSync(path.join(FIXTURES, `${f.name}.json`), 'utf8');
    assert.doesNotMatch(text, /"stats"|\/(home|root|tmp|work)\//, f.name);
  }
  // The arms each fixture stands for (a fixture recorded from another command would not prove these checks).
  assert.deepEqual(fixture('steady-floor-C').arms.map((a) => a.name), ['floor', 'C']);
  assert.deepEqual(fixture('steady-quick').arms.map((a) => a.name), ['direct', 'floor', 'floor-1', 'A', 'B1', 'B2', 'C']);
  assert.deepEqual(fixture('steady-C-mtls').arms.map((a) => a.name), ['C-mtls']);
  assert.deepEqual(fixture('steady-h2load').arms.map((a) => a.name), ['C-h2c', 'C-h2']);
  assert.equal(fixture('steady-tracing').settings['tracing'], 'on (ratio 1)');
  assert.equal(fixture('steady-floor-C').settings['cacheTtlMs'], 600000);
});

test('steady (floor, C): answered, counted, and the ratio and targets from the run\'s own numbers', () => {
  const r = fixture('steady-floor-C');
  assert.match(renderMarkdown(r as BenchReport), /\| floor \| [\d,]+ \|/);
  assert.match(renderMarkdown(r as BenchReport), /\| C \| [\d,]+ \|/);
  // Every arm answered, without non-2xx, latency in order, CPU counted.
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').requests = 0))), /C answered nothing/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'floor').rps = 0))), /floor answered nothing/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'floor').non2xx = 3))), /floor non-2xx: 3/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').p50Ms = armOf(x, 'C').p99Ms + 1))), /C latency out of order/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').maxMs = armOf(x, 'C').p99Ms / 2))), /C latency out of order/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'floor').cpuMsPerRequest = 0))), /floor CPU not counted/);
  // The run's arms are the ones it selected, with no failure recorded.
  assert.match(steady(broken(r, (x) => void x.arms.splice(0, 1))), /arms C are not the arms the run selected \(floor,C\)/);
  assert.match(steady(broken(r, (x) => void (x.failures = ['arm C: no successful answer']))), /recorded failures: arm C: no successful answer/);
  assert.match(steady(broken(r, (x) => void (x.scenario = 'churn'))), /not steady/);
  // The cache's counts against the load's, within one connection's worth of slack at each end of the window: a request
  // the warm-up dropped may reach the proxy after the reset, one the window's end dropped is counted unanswered.
  const slack = 2 * CONNECTIONS;
  const c = armOf(r, 'C');
  const cache = c.cache!;
  const own = cache.misses - cache.coalesced;
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').cache = undefined))), /C has no cache hits/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').cache!.hits = 0))), /C has no cache hits/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').cache!.misses = CONNECTIONS * ACTORS + 1))), /C missed 401 times: more than 8 connections × 50 actors × 1 TTL window/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').cache!.hits = c.requests - cache.misses - 1))), /C: \d+ hits \+ \d+ misses for \d+ requests/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').cache!.hits = c.requests - cache.misses + slack + 1))), /C: \d+ hits \+ \d+ misses for \d+ requests \(slack 16\)/);
  assert.doesNotMatch(steady(broken(r, (x) => void (armOf(x, 'C').cache!.hits = c.requests - cache.misses + slack))), /C: \d+ hits/);
  // With no warm-up only the window's end drops requests.
  const noWarmup = broken(r, (x) => {
    x.settings['warmupS'] = 0;
    armOf(x, 'C').cache!.hits = c.requests - cache.misses + CONNECTIONS + 1;
  });
  assert.match(steady(noWarmup), /C: \d+ hits \+ \d+ misses for \d+ requests \(slack 8\)/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').cache!.coalesced = cache.misses + slack + 1))), /C: \d+ coalesced of \d+ misses/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').cache!.coalesced = -1))), /C: -1 coalesced/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').extprocStreams = own + slack + 1))), /C opened \d+ ext_proc streams for \d+ misses/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').extprocStreams = null))), /C opened null ext_proc streams/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').resumeCalls = own + slack + 1))), /C made \d+ ResumeActor calls for \d+ misses of its own/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').resumeCalls = null))), /C has no ResumeActor count/);
  // A TTL shorter than the arm's run allows a miss per connection and actor in each TTL window it touches.
  const shortTtl = broken(r, (x) => {
    x.settings['cacheTtlMs'] = 1000;
    armOf(x, 'C').cache!.misses = 10_000;
  });
  assert.match(steady(shortTtl), new RegExp(`C missed 10000 times: more than 8 connections × 50 actors × ${Math.ceil(c.durationS) + 1} TTL window`));
  // The ratio is C's throughput over the floor's (NaN, null or a stale value fail); a ratio of arms that did not run is null.
  assert.match(steady(broken(r, (x) => void (x.ratios['C/floor'] = (x.ratios['C/floor'] as number) * 1.01))), /ratio C\/floor is/);
  assert.match(steady(broken(r, (x) => void (x.ratios['C/floor'] = null))), /ratio C\/floor is null/);
  assert.match(steady(broken(r, (x) => void (x.ratios['C/floor'] = NaN))), /ratio C\/floor is NaN/);
  assert.match(steady(broken(r, (x) => void (x.ratios['C/A'] = 1))), /ratio C\/A is 1 although C or A did not run/);
  // The targets are judged from that ratio and from the front processes' CPU: a flipped status fails, and so
  // does a status left as it was when the numbers say otherwise.
  const floorTarget = r.targets.find((t) => t.name.startsWith('C >= 95% of floor'))!;
  const cpuTarget = r.targets.find((t) => t.name.startsWith('C proxy CPU per request'))!;
  const flip = (s: string): 'met' | 'not-met' => (s === 'met' ? 'not-met' : 'met');
  assert.match(steady(broken(r, (x) => void (x.targets.find((t) => t.name === floorTarget.name)!.status = flip(floorTarget.status)))), /target "C >= 95% of floor" is/);
  assert.match(steady(broken(r, (x) => void (x.targets.find((t) => t.name === cpuTarget.name)!.status = flip(cpuTarget.status)))), /target "C proxy CPU per request <= 1.05x floor's" is/);
  const faster = broken(r, (x) => {
    const floor = armOf(x, 'floor');
    const fast = armOf(x, 'C');
    fast.rps = floorTarget.status === 'met' ? floor.rps * 0.5 : floor.rps;
    x.ratios['C/floor'] = fast.rps / floor.rps;
  });
  assert.match(steady(faster), /target "C >= 95% of floor" is (not-)?met, but C\/floor = /);
  assert.doesNotMatch(steady(faster), /ratio C\/floor/, 'the ratio itself was kept consistent');
  assert.match(steady(broken(r, (x) => void (x.targets = x.targets.filter((t) => t.name !== cpuTarget.name)))), /the target "C proxy CPU per request" is not reported/);
});

test('steady, every default arm (npm run bench -- --quick): cache off opens a stream per request, each ratio is its arms\' own', () => {
  const r = fixture('steady-quick');
  const a = armOf(r, 'A');
  const slack = 2 * CONNECTIONS;
  assert.match(steady(broken(r, (x) => void (armOf(x, 'A').extprocStreams = a.requests + slack + 1))), /A opened \d+ ext_proc streams \(0 of them retries\) for \d+ requests \(slack 16\)/);
  // 15 streams more than requests (a CI run on a loaded machine): the warm-up's dropped requests and the window's.
  assert.doesNotMatch(steady(broken(r, (x) => void (armOf(x, 'A').extprocStreams = a.requests + 15))), /A opened/);
  // A stream opened again for the same request (the client's retry, counted in the proxy's /stats) is not a second request's.
  const retriedOnce = broken(r, (x) => {
    const arm = armOf(x, 'A');
    arm.extprocStreams = a.requests + slack + 1;
    (arm as { stats?: unknown }).stats = { ...(arm.stats ?? {}), proxy: { extproc: { retries: { retried: 1 } } } };
  });
  assert.doesNotMatch(steady(retriedOnce), /A opened/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'A').extprocStreams = a.requests - slack - 1))), /A opened \d+ ext_proc streams/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'B2').cache!.hits += 100))), /B2: \d+ hits \+ \d+ misses/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'direct').requests = 0))), /direct answered nothing/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'floor-1').non2xx = 1))), /floor-1 non-2xx: 1/);
  assert.match(steady(broken(r, (x) => void (x.ratios['B1/A'] = x.ratios['B2/A'] ?? null))), /ratio B1\/A is/);
  assert.match(steady(broken(r, (x) => void (x.ratios['C/direct'] = 1 / (x.ratios['C/direct'] as number)))), /ratio C\/direct is/);
  // The cache arms' ResumeActor calls follow their own misses: B2 resolves them itself, without ext_proc.
  assert.match(steady(broken(r, (x) => void (armOf(x, 'B2').resumeCalls = slack + 1))), /B2 made 17 ResumeActor calls for 0 misses of its own/);
});

test('steady, the mTLS and h2load arms: answered through their own protocol, with no client error, from the cache', () => {
  const m = fixture('steady-C-mtls');
  assert.match(renderMarkdown(m as BenchReport), /\| C-mtls \| [\d,]+ \|/);
  // A proxy that did not present its certificate, or presented another identity, would get no answer at all.
  assert.match(steady(broken(m, (x) => void (armOf(x, 'C-mtls').requests = 0))), /C-mtls answered nothing/);
  assert.match(steady(broken(m, (x) => void (armOf(x, 'C-mtls').errors = 1))), /C-mtls errors: 1/);
  assert.match(steady(broken(m, (x) => void (armOf(x, 'C-mtls').non2xx = 2))), /C-mtls non-2xx: 2/);
  assert.match(steady(broken(m, (x) => void (armOf(x, 'C-mtls').cache!.hits = 0))), /C-mtls has no cache hits/);
  const h = fixture('steady-h2load');
  assert.match(renderMarkdown(h as BenchReport), /\| C-h2 \| [\d,]+ \|/);
  assert.match(steady(broken(h, (x) => void (armOf(x, 'C-h2').errors = 4))), /C-h2 errors: 4/);
  assert.match(steady(broken(h, (x) => void (armOf(x, 'C-h2c').cache = undefined))), /C-h2c has no cache hits/);
  assert.match(steady(broken(h, (x) => void (armOf(x, 'C-h2c').rps = 0))), /C-h2c answered nothing/);
  // The errors rule is the TLS and h2load arms' own: the floor's and C's plain HTTP/1.1 load reports its errors in
  // the cache's slack instead.
  const floorC = fixture('steady-floor-C');
  assert.deepEqual(checkSteadyReport(broken(floorC, (x) => void (armOf(x, 'floor').errors = 1)) as BenchReport), []);
});

test('steady --tracing on: at least three spans per measured request (server, lookup, upstream) at ratio 1', () => {
  const r = fixture('steady-tracing');
  const c = armOf(r, 'C');
  assert.ok((c.tracedSpans ?? 0) >= 3 * c.requests, 'the recorded run exported them');
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').tracedSpans = 3 * c.requests - 1))), /C: \d+ spans for \d+ measured requests/);
  assert.match(steady(broken(r, (x) => void delete armOf(x, 'C').tracedSpans)), /C: tracing is on \(ratio 1\) but the report has no span count/);
  assert.match(steady(broken(r, (x) => void (armOf(x, 'C').non2xx = 1))), /C non-2xx: 1/);
  // Sampled at another ratio the count is only required to be there; with tracing off it is not read at all.
  assert.deepEqual(checkSteadyReport(broken(r, (x) => {
    x.settings['tracing'] = 'on (ratio 0.01)';
    armOf(x, 'C').tracedSpans = 1;
  }) as BenchReport), []);
  assert.deepEqual(checkSteadyReport(broken(r, (x) => {
    x.settings['tracing'] = 'off';
    delete armOf(x, 'C').tracedSpans;
  }) as BenchReport), []);
});

test('faults: every phase reported with answers, the kill felt, nothing twice, each target from its phase\'s counts', () => {
  const r = fixture('faults');
  assert.match(renderMarkdown(r as BenchReport), /\| C \| \(a\) worker killed \|/);
  const phase = (x: Report, i: number) => armOf(x, 'C').faults!.phases[i]!;
  assert.match(faults(broken(r, (x) => void delete armOf(x, 'C').faults)), /C has no faults block/);
  assert.match(faults(broken(r, (x) => void armOf(x, 'C').faults!.phases.splice(4, 1))), /C phases are baseline, \(a\) worker killed, \(b\) extproc restart, \(c\) control plane down$/m);
  assert.match(faults(broken(r, (x) => void (phase(x, 2).requests = 0))), /C: \(b\) extproc restart saw no answer/);
  assert.match(faults(broken(r, (x) => void (armOf(x, 'C').faults!.workerProcesses = 3))), /C: 3 worker processes, the run asked for 4/);
  assert.match(faults(broken(r, (x) => void (armOf(x, 'C').faults!.killedActors = 0))), /the killed worker hosted no actor/);
  assert.match(faults(broken(r, (x) => void Object.assign(phase(x, 1), { connectFailures: 0, resets: 0 }))), /the proxy did not feel the kill/);
  assert.match(faults(broken(r, (x) => void (phase(x, 1).reruns = 0))), /no request re-ran after the kill/);
  assert.match(faults(broken(r, (x) => void (phase(x, 0).non2xx = 1))), /C: 1 non-2xx before the faults/);
  assert.match(faults(broken(r, (x) => void (armOf(x, 'C').duplicates = 1))), /C: 1 duplicate deliveries/);
  assert.match(faults(broken(r, (x) => void (armOf(x, 'C').faults!.coldRequests = 0))), /no request for a cold actor/);
  // The proxy's own count of non-replayable 502s fits the client's 502s and its own resets.
  assert.match(faults(broken(r, (x) => void (phase(x, 1).non2xxNotReplayable = (phase(x, 1).statusCounts['502'] ?? 0) + 1))), /\(a\) worker killed: \d+ non-replayable 502s for \d+ client 502s/);
  assert.match(faults(broken(r, (x) => void (phase(x, 4).resetsNotReplayable = 1000))), /C: \d+ non-replayable resets of \d+ resets/);
  assert.match(faults(broken(r, (x) => void Object.assign(phase(x, 3), { hits: 0, misses: 0 }))), /C: \(c\) control plane down counted no cache lookup/);
  // Each fault's target is its phase's own verdict: a phase's counts changed under an unchanged target fail.
  assert.match(faults(broken(r, (x) => void (phase(x, 2).non2xx = 1))), /target "C: \(b\) no client-visible error \(ext_proc restart\)" is met, but 1 non-2xx/);
  assert.match(faults(broken(r, (x) => void (phase(x, 3).errors = 2))), /target "C: \(c\) no client-visible error \(control plane down\)" is met/);
  // (a) excuses the proxy's own non-replayable resets, and nothing else.
  assert.match(faults(broken(r, (x) => void (phase(x, 1).non2xx = phase(x, 1).non2xxNotReplayable + 1))), /target "C: \(a\) no client-visible error other than resets/);
  assert.match(faults(broken(r, (x) => void (phase(x, 3).misses = 19))), /target "C: \(c\) at least 20 misses during the outage \(control plane down\)" is met, but 19 misses/);
  assert.match(faults(broken(r, (x) => void (x.targets = x.targets.filter((t) => !t.name.includes('(b) at least'))))), /the target "C: \(b\) at least 20 misses" is not reported/);
  assert.match(faults(broken(r, (x) => void (phase(x, 1).connectFailures = 2))), /target "C: \(a\) failed connects per proxy process = 1" is met, but 2 failed connects/);
  assert.match(faults(broken(r, (x) => void (x.settings['arms'] = ['A', 'C']))), /arms C are not the arms the run selected \(A,C\)/);
});

test('grpc: every call answered OK, sums and overlaps from the calls\' own times, targets from the arm\'s figures', () => {
  const r = fixture('grpc');
  assert.match(renderMarkdown(r as BenchReport), /\| C \| \d+ \| 0 \| OK×\d+ \|/);
  assert.equal(grpcCallCount(6, 2), 3 + 12 + 2 + 4, 'one at a time (at least 3), K per round, a unary alone and a stream plus a unary per round');
  assert.equal(armOf(r, 'C').requests, grpcCallCount(6, 2));
  const g = (x: Report, arm = 'C') => armOf(x, arm).grpc!;
  assert.match(grpc(broken(r, (x) => void delete armOf(x, 'direct').grpc)), /direct has no grpc block/);
  assert.match(grpc(broken(r, (x) => void (armOf(x, 'C').requests -= 1))), /C: 20 calls, the settings give 21/);
  assert.match(grpc(broken(r, (x) => void (armOf(x, 'C').statusCounts = { OK: 20, UNAVAILABLE: 1 }))), /C: not every call answered OK/);
  assert.match(grpc(broken(r, (x) => void (armOf(x, 'direct').errors = 1))), /direct: 1 errors/);
  assert.match(grpc(broken(r, (x) => void (x.settings['grpcCalls'] = 10))), /C: 6 calls of 20 replies per round, the settings give 10 of 20/);
  assert.match(grpc(broken(r, (x) => void (g(x).worker = '127.0.0.9'))), /C called worker 127.0.0.9, the first arm/);
  assert.match(grpc(broken(r, (x) => void (g(x).unaryActor = g(x).streamActor))), /C: the unary calls go to the streaming actor/);
  assert.match(grpc(broken(r, (x) => void g(x).aloneMs.pop())), /C: 2 calls alone/);
  assert.match(grpc(broken(r, (x) => void g(x, 'direct').rounds.pop())), /direct: 1 rounds of 2/);
  assert.match(grpc(broken(r, (x) => void (g(x).rounds[0]!.callMsSum += 1))), /C round 1: [\d.]+ is not the sum of/);
  assert.match(grpc(broken(r, (x) => void (g(x).rounds[1]!.streamMsSum *= 2))), /C round 2: [\d.]+ is not the sum of/);
  assert.match(grpc(broken(r, (x) => void (g(x).rounds[0]!.errors = 1))), /C round 1: 1 errors/);
  // A call streams within its own duration, which lies within the round's wall time.
  assert.match(grpc(broken(r, (x) => {
    const round = g(x).rounds[0]!;
    round.streamMs[2] = round.callMs[2]! + 5;
    round.streamMsSum += 1e9; // and the sum kept out of this assertion's way
  })), /C round 1 call 2: streaming [\d.]+ ms, duration/);
  assert.match(grpc(broken(r, (x) => void (g(x).rounds[1]!.wallMs = 1))), /C round 2 call \d: streaming .* wall 1 ms/);
  assert.match(grpc(broken(r, (x) => void (g(x).overlap *= 1.5))), /C: overlap [\d.]+ is not/);
  assert.match(grpc(broken(r, (x) => void (g(x, 'direct').durationOverlap = 7))), /direct: duration overlap 7 is not/);
  assert.match(grpc(broken(r, (x) => void (g(x).wallPerCall += 0.5))), /C: wall ÷ one call [\d.]+ is not/);
  assert.match(grpc(broken(r, (x) => {
    g(x).wallP50Ms += 1;
    g(x).wallPerCall = g(x).wallP50Ms / g(x).aloneP50Ms;
  })), /C: the medians [\d.]+ and [\d.]+ are not measured values/);
  assert.match(grpc(broken(r, (x) => void (g(x).unaryWhileStreaming[0]!.ok = false))), /C: unary calls beside a stream/);
  // The targets from the arm's own figures.
  assert.match(grpc(broken(r, (x) => void (x.targets.find((t) => t.name.startsWith('C: 6 concurrent'))!.status = 'not-met'))), /target "C: 6 concurrent streaming calls to one worker overlap \(wall time <= 2x one call\)" is not-met, but wall p50/);
  assert.match(grpc(broken(r, (x) => void (g(x, 'direct').unaryWhileStreaming[1]!.streamOpen = false))), /target "direct: a unary call to the same worker is answered while a stream is open" is met/);
  // Both bindings were learned in the warm-up and the TTL outlives the arm: every measured call is a hit.
  assert.match(grpc(broken(r, (x) => void Object.assign(armOf(x, 'C').cache!, { hits: 20, misses: 1 }))), /C: 20 hits and 1 misses for 21 calls; every one should hit/);
});

test('side-by-side: every arm answered in every round at its rate; each ratio is the mean of the rounds\' own', () => {
  const r = read<SideBySideReport>('side-by-side');
  assert.deepEqual(r.arms, ['floor', 'C', 'C@actor-edge', 'C copy']);
  assert.match(renderSideBySide(r), /\| C copy ÷ C \| 2 \| [\d.]+ \| [\d.]+ \|/);
  assert.match(sbs(broken(r, (x) => void delete x.rounds[1]!['C copy'])), /round 2: C copy CPU per request undefined/);
  assert.match(sbs(broken(r, (x) => void (x.rounds[0]!['floor'] = NaN))), /round 1: floor CPU per request NaN/);
  assert.match(sbs(broken(r, (x) => void (x.requests[1]!['C'] = 0))), /round 2: C answered nothing/);
  assert.match(sbs(broken(r, (x) => void (x.seconds[0]!['C@actor-edge'] = 1))), /round 1: C@actor-edge loaded for 1 s of 3/);
  // --rate 50: a closed loop on two connections answers many times what the rate lets through.
  assert.match(sbs(broken(r, (x) => void (x.requests[0]!['floor'] = 50 * (Math.ceil(x.seconds[0]!['floor']!) + 1) + 1))), /round 1: floor answered \d+ in [\d.]+ s at --rate 50/);
  assert.deepEqual(checkSideBySideReport(broken(r, (x) => {
    x.settings['ratePerArm'] = 'closed loop';
    x.requests[0]!['floor'] = 100_000;
  })), [], 'without --rate there is no such bound');
  assert.match(sbs(broken(r, (x) => void (x.ratios[4]!.mean *= 1.02))), /C copy ÷ C: mean/);
  assert.match(sbs(broken(r, (x) => void (x.ratios[0]!.n = 1))), /C ÷ floor: 1 rounds of 2/);
  assert.match(sbs(broken(r, (x) => void x.ratios.pop())), /ratios .* are not C ÷ floor, C@actor-edge ÷ floor, C copy ÷ floor, C@actor-edge ÷ C, C copy ÷ C/);
  assert.match(sbs(broken(r, (x) => void x.rounds.pop())), /1 rounds \(2 request counts, 2 durations\) of 2/);
  assert.match(sbs(broken(r, (x) => void (x.failures = ['round 1, arm C: 0 answers']))), /recorded failures: round 1, arm C: 0 answers/);
  assert.match(sbs(broken(r, (x) => void (x.arms = ['floor', 'C']))), /arms floor,C are not the run's/);
});

test('fleet: every arm answered, the affinity arm ran its phases, every correctness target met', () => {
  const r = fixture('fleet');
  assert.match(fleet(broken(r, (x) => void (armOf(x, 'fleet-rr').requests = 0))), /fleet-rr answered nothing/);
  assert.match(fleet(broken(r, (x) => void armOf(x, 'fleet-affinity').phases!.pop())), /fleet-affinity phases are kill, rollout$/m);
  assert.match(fleet(broken(r, (x) => void (armOf(x, 'fleet-affinity').phases![1]!.requests = 0))), /the rollout phase saw no answer/);
  assert.match(fleet(broken(r, (x) => void delete armOf(x, 'fleet-sni').fleet)), /fleet-sni has no fleet block/);
  assert.match(fleet(broken(r, (x) => void (x.targets.find((t) => t.correctness === true)!.status = 'not-met'))), /correctness target ".*" is not-met/);
  assert.match(fleet(broken(r, (x) => void (x.targets = x.targets.filter((t) => t.correctness !== true)))), /no correctness target is reported/);
  assert.match(fleet(broken(r, (x) => void (x.scenario = 'steady'))), /not fleet/);
});

test('check-report.js: passes a run\'s directory or report, fails a broken one or missing files, refuses bad arguments', () => {
  const script = fileURLToPath(new URL('./check-report.js', import.meta.url));
  const run = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'check-report-'));
  try {
    const stem = path.join(dir, '2026-01-01T00-00-00Z-faults');
    copyFileSync(path.join(FIXTURES, 'faults.json'), `${stem}.json`);
    const report = fixture('faults');
    writeFileSync(`${stem}.md`, renderMarkdown(report));
    let out = run('faults', dir);
    assert.equal(out.status, 1, out.stderr);
    assert.match(out.stderr, /the run wrote no 2026-01-01T00-00-00Z-faults\.svg/);
    writeFileSync(`${stem}.svg`, '<svg></svg>');
    out = run('faults', dir);
    assert.equal(out.status, 1, out.stderr);
    assert.match(out.stderr, /the chart does not say what arm C is/);
    writeFileSync(`${stem}.svg`, renderChart(report.arms.map((a) => ({ ...a, description: armDescription(a.name) as string })), { title: 'faults' }));
    out = run('faults', dir);
    assert.equal(out.status, 0, out.stderr);
    assert.match(out.stdout, /faults: .*-faults\.json passes every check/);
    out = run('steady', dir);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /0 steady reports \(none\), want 1/);
    writeFileSync(`${stem}.json`, JSON.stringify(broken(fixture('faults'), (x) => void (armOf(x, 'C').duplicates = 2))));
    out = run('faults', `${stem}.json`);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /faults: 1 problem\(s\)\n {2}- C: 2 duplicate deliveries/);
    assert.equal(run('churn', dir).status, 2, 'a scenario without checks');
    assert.equal(run('faults').status, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the Markdown and the chart a run writes explain its arms and state each target with its verdict', () => {
  for (const name of ['steady-floor-C', 'faults', 'grpc', 'fleet']) {
    const r = fixture(name);
    const svg = renderChart(r.arms.map((a) => ({ ...a, description: armDescription(a.name) as string })), { title: name });
    assert.deepEqual(checkReportText(r, renderMarkdown(r), svg), [], name);
  }
  const r = fixture('steady-floor-C');
  const md = renderMarkdown(r);
  assert.match(checkReportText(r, md.replace(/^- `floor`: .*$/m, ''), undefined).join('\n'), /does not say what arm floor is/);
  const t = r.targets[0]!;
  assert.match(checkReportText(r, md.replace(`- ${targetLine(t)}`, `- [met] ${t.name}: ${t.detail}`), undefined).join('\n'), /does not state target .* with its verdict[\s\S]*instead of stating them/);
});

test('egress: the recorded run passes; a failed tunnel, a control-plane count that does not match the tunnels, a cache that missed tunnels, or a revocation that left a tunnel open or came late is reported', () => {
  const r = fixture('egress');
  const egress = (x: Report): string => checkEgressReport(x as BenchReport).join('\n');
  assert.equal(egress(r), '');
  assert.match(egress(broken(r, (c) => void (armOf(c, 'egress-C').errors = 3))), /egress-C: .* 3 failed/);
  assert.match(egress(broken(r, (c) => void (armOf(c, 'egress-A').egress!.getActorCalls = armOf(c, 'egress-A').requests + 100))), /egress-A: \d+ GetActor calls for \d+ tunnels/);
  assert.match(egress(broken(r, (c) => void (armOf(c, 'egress-C').egress!.getActorCalls = 10_000))), /egress-C: 10000 GetActor calls, more than 50 actors/);
  assert.match(egress(broken(r, (c) => void (armOf(c, 'egress-C').egress!.cache!.hits = 0))), /egress-C: the cache saw \d+ CONNECTs/);
  assert.match(egress(broken(r, (c) => void (c.targets = []))), /egress targets/);
  type Revocation = NonNullable<ArmResult['revocation']>;
  const revocation = (c: Report): { -readonly [K in keyof Revocation]: Revocation[K] } => armOf(c, 'egress-C').revocation as Revocation;
  assert.match(egress(broken(r, (c) => void (revocation(c).tunnelsClosed = 19))), /egress-C revocation: 19 of 20 tunnels closed/);
  assert.match(egress(broken(r, (c) => void (revocation(c).lagMs = { p50: 1, p99: 9000, max: 9000 }))), /egress-C revocation: lag max 9000 ms, over 8000 ms/);
  assert.match(egress(broken(r, (c) => void delete (armOf(c, 'egress-C') as { revocation?: unknown }).revocation)), /no revocation phase reported/);
});

test('heavy-filter: the recorded run passes; a failed request, kinds that do not add up, a filter that ran other than once per heavy POST or on the wrong path, a stale result, or a verdict not its numbers\' is reported', () => {
  const r = fixture('heavy-filter');
  const heavy = (x: Report): string => checkHeavyFilterReport(x as BenchReport).join('\n');
  assert.equal(heavy(r), '');
  assert.deepEqual(r.arms.map((a) => a.name), ['heavy-none', 'heavy-inline', 'heavy-offload']);
  const h = (c: Report, name: string) => armOf(c, name).heavyFilter!;
  assert.match(heavy(broken(r, (c) => void (h(c, 'heavy-offload').errors = 2))), /heavy-offload: 0 requests without an answer, 2 without a 2xx/);
  assert.match(heavy(broken(r, (c) => void (h(c, 'heavy-inline').hits.requests += 1))), /heavy-inline: \d+ hits \+ \d+ heavy POSTs for \d+ requests/);
  assert.match(heavy(broken(r, (c) => void (h(c, 'heavy-inline').filterOffload!.inline += 1))), /heavy-inline: \d+ offloaded calls for \d+ heavy POSTs/);
  assert.match(heavy(broken(r, (c) => void (h(c, 'heavy-none').filterOffload!.inline = 3))), /heavy-none: 3 offloaded calls with no filter/);
  assert.match(
    heavy(broken(r, (c) => {
      const f = h(c, 'heavy-offload').filterOffload!;
      f.inline += f.pool;
      f.pool = 0;
    })),
    /heavy-offload: no call ran on the pool/,
  );
  assert.match(heavy(broken(r, (c) => void (h(c, 'heavy-offload').filterOffload!.stale = 1))), /heavy-offload: 1 stale results/);
  assert.match(heavy(broken(r, (c) => void (h(c, 'heavy-offload').filterOffload!.workers = 2))), /--filter-workers 2, not 1/);
  assert.match(heavy(broken(r, (c) => void (c.targets = c.targets.filter((t) => !t.name.startsWith('heavy-offload'))))), /is not reported/);
  const flipped = broken(r, (c) => {
    const t = c.targets.find((x) => x.name.startsWith('heavy-offload'))!;
    t.status = t.status === 'met' ? 'not-met' : 'met';
  });
  assert.match(heavy(flipped), /target "heavy-offload hits p99 <= 2x heavy-none's" is/);
  assert.match(heavy(broken(r, (c) => void (h(c, 'heavy-inline').hits.p99Ms *= 3))), /heavy-inline hits p99 ÷ heavy-none's" states/);
});
