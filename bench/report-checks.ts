/**
 * The benchmark's end-to-end checks, as pure functions of the report a run wrote (`--out-dir`): every arm it ran
 * answered, the numbers hang together, and each ratio and target is the one the run's own numbers give — never
 * how fast. Each returns the problems it found (empty when the report passes). `check-report.ts` applies them to
 * the runs `.ci/run` makes; `report-checks.test.ts` runs them on recorded reports (`testing/fixtures/`) and on
 * copies broken the way each check guards against.
 */
import { num as count, obj } from './admin.js';
import { CPU_TARGET, FLOOR_TARGET, GRPC_OVERLAP_TARGET, MIN_OUTAGE_MISSES } from './report.js';
import { HEAVY_P99_TARGET, INLINE_RATIO_NAME, OFFLOAD_TARGET_NAME } from './heavy-report.js';
import type { SideBySideReport } from './side-by-side.js';
import { H2_ARM_NAMES } from './h2-arms.js';
import type { ArmResult, BenchReport, FaultPhase, ScenarioName, TargetResult } from './types.js';

/** The scenarios with checks of their own (the others get none: `checkReport` refuses them). */
export const CHECKED_SCENARIOS = ['steady', 'faults', 'grpc', 'fleet', 'egress', 'heavy-filter', 'side-by-side'] as const;
export type CheckedScenario = (typeof CHECKED_SCENARIOS)[number];

/**
 * Arms whose failures show as client errors rather than as statuses (a TLS handshake refused, an HTTP/2 session
 * that never opens): for them no error at all is what proves the protocol worked.
 */
const NO_ERROR_ARMS: ReadonlySet<string> = new Set(['A-mtls', 'C-mtls', 'A-extproc-mtls', ...H2_ARM_NAMES]);

/** The faults scenario's phases, in order (a literal copy: the check must fail if the scenario drops one). */
const FAULT_PHASES = ['baseline', '(a) worker killed', '(b) extproc restart', '(c) control plane down', 'recovery'];

/** The fleet-affinity arm's phases, in order. */
const FLEET_PHASES = ['kill', 'rollout', 'scale'];

/** A grpc arm's calls: one at a time (at least 3), K per round, a unary call alone and a stream plus a unary call per round. */
export function grpcCallCount(calls: number, rounds: number): number {
  return Math.max(3, rounds) + calls * rounds + rounds + 2 * rounds;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
const close = (a: number, b: number): boolean => Number.isFinite(a) && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Collects what is wrong; `expect` records `message` when `ok` is false. */
class Problems {
  readonly list: string[] = [];
  expect(ok: boolean, message: string): boolean {
    if (!ok) this.list.push(message);
    return ok;
  }
}

// ---- every scenario that writes a BenchReport ---------------------------------------------------------------

/** The arms the run selected (`settings.arms`) all ran, in that order, and no failure was recorded. */
function checkArmsRan(report: BenchReport, scenario: ScenarioName, p: Problems): void {
  p.expect(report.scenario === scenario, `the report is of scenario ${String(report.scenario)}, not ${scenario}`);
  p.expect((report.failures ?? []).length === 0, `the run recorded failures: ${(report.failures ?? []).join('; ')}`);
  const selected = report.settings['arms'];
  const names = report.arms.map((a) => a.name);
  p.expect(names.length > 0, 'the report has no arm');
  if (p.expect(Array.isArray(selected), 'settings.arms is missing')) {
    p.expect(JSON.stringify(names) === JSON.stringify(selected), `arms ${names.join(',')} are not the arms the run selected (${(selected as unknown[]).join(',')})`);
  }
}

/** The arm answered, its latency figures are in order and its CPU was counted. */
function checkAnswered(arm: ArmResult, p: Problems, opts: { non2xx: boolean }): void {
  p.expect(arm.requests > 0 && arm.rps > 0, `${arm.name} answered nothing (${arm.requests} requests, ${arm.rps} req/s)`);
  if (opts.non2xx) p.expect(arm.non2xx === 0, `${arm.name} non-2xx: ${arm.non2xx}`);
  if (NO_ERROR_ARMS.has(arm.name)) p.expect(arm.errors === 0, `${arm.name} errors: ${arm.errors}`);
  p.expect(arm.p50Ms > 0 && arm.p50Ms <= arm.p99Ms && arm.p99Ms <= arm.maxMs, `${arm.name} latency out of order: p50 ${arm.p50Ms}, p99 ${arm.p99Ms}, max ${arm.maxMs} ms`);
  p.expect((arm.cpuMsPerRequest ?? 0) > 0, `${arm.name} CPU not counted (${String(arm.cpuMsPerRequest)} ms per request)`);
}

/** Each throughput ratio `X/Y` is X's req/s over Y's when both ran, and null when either did not. */
function checkRatios(report: BenchReport, p: Problems): void {
  for (const [key, value] of Object.entries(report.ratios)) {
    const [n, d] = key.split('/');
    const num_ = report.arms.find((a) => a.name === n);
    const den = report.arms.find((a) => a.name === d);
    if (num_ && den && den.rps > 0) {
      const want = num_.rps / den.rps;
      p.expect(typeof value === 'number' && value > 0 && close(value, want), `ratio ${key} is ${String(value)}, not ${num_.rps} / ${den.rps} = ${want}`);
    } else {
      p.expect(value === null, `ratio ${key} is ${String(value)} although ${n} or ${d} did not run`);
    }
  }
}

function findTarget(report: BenchReport, p: Problems, what: string, match: (t: TargetResult) => boolean): TargetResult | undefined {
  const t = report.targets.find(match);
  p.expect(t !== undefined, `the target "${what}" is not reported`);
  return t;
}

/** The target's status is the one its own numbers give. */
function expectStatus(p: Problems, t: TargetResult | undefined, met: boolean, why: string): void {
  if (t === undefined) return;
  const want = met ? 'met' : 'not-met';
  p.expect(t.status === want, `target "${t.name}" is ${t.status}, but ${why} makes it ${want} (${t.detail})`);
}

// ---- steady -------------------------------------------------------------------------------------------------

const front = (arm: ArmResult): number | undefined => arm.components.find((c) => c.component === 'proxy' || c.component === 'floor')?.cpuMsPerRequest;

/**
 * How many lookups (and ext_proc streams) the window may count beyond the requests the load generator counted: the
 * load generator drops each connection's request in flight when a phase ends, so up to one per connection, sent in
 * the warm-up, may reach the proxy after the counters were reset, and up to one per connection, sent at the end of
 * the window, is counted with no answer counted; plus any request the load generator gave up on.
 */
export function windowSlack(report: BenchReport, arm: ArmResult): number {
  const connections = num(report.settings['connections']) ?? 0;
  const warmupS = num(report.settings['warmupS']) ?? 0;
  return connections * (warmupS > 0 ? 2 : 1) + arm.errors;
}

/**
 * The cache's counts against the load's. A binding, once learned, serves its actor until its TTL ends, so an
 * actor misses only while its first lookup is still on its way (at most once per connection) in each TTL the
 * arm's run touches. Every request the load generator counted was looked up in the window, and up to
 * `windowSlack` more may have been. Streams and ResumeActor calls are counted by other processes, a little after
 * the proxy's miss: the same slack. A miss opens its own ext_proc stream unless it waited for another
 * connection's miss of the same actor (coalesced), so streams follow the misses less the coalesced ones.
 */
function checkCache(arm: ArmResult, report: BenchReport, p: Problems): void {
  const c = arm.cache;
  if (!c) return;
  const connections = num(report.settings['connections']) ?? 0;
  const actors = num(report.settings['actors']) ?? 0;
  const ttlMs = num(report.settings['cacheTtlMs']) ?? 0;
  const warmupS = num(report.settings['warmupS']) ?? 0;
  // A TTL longer than the arm's whole run: one window; else one per TTL the measurement touches, plus the first.
  const windows = ttlMs >= (warmupS + arm.durationS) * 1000 ? 1 : Math.ceil((arm.durationS * 1000) / ttlMs) + 1;
  const { hits, misses, coalesced } = c;
  const slack = windowSlack(report, arm);
  p.expect(misses <= connections * actors * windows, `${arm.name} missed ${misses} times: more than ${connections} connections × ${actors} actors × ${windows} TTL window(s)`);
  p.expect(hits + misses >= arm.requests && hits + misses <= arm.requests + slack, `${arm.name}: ${hits} hits + ${misses} misses for ${arm.requests} requests (slack ${slack})`);
  p.expect(coalesced >= 0 && coalesced <= misses + slack, `${arm.name}: ${coalesced} coalesced of ${misses} misses`);
  const own = misses - coalesced;
  if (arm.components.some((x) => x.component === 'extproc')) {
    p.expect(arm.extprocStreams !== null && Math.abs(arm.extprocStreams - own) <= slack, `${arm.name} opened ${String(arm.extprocStreams)} ext_proc streams for ${misses} misses, ${coalesced} of them coalesced (slack ${slack})`);
  }
  if (p.expect(arm.resumeCalls !== null, `${arm.name} has no ResumeActor count`)) {
    p.expect((arm.resumeCalls as number) <= own + slack, `${arm.name} made ${String(arm.resumeCalls)} ResumeActor calls for ${own} misses of its own (slack ${slack})`);
  }
}

/** The proxy's ext_proc stream retries in the arm's window (its `/stats` `extproc.retries.retried`; 0 when not reported). */
function extprocRetriesOf(arm: ArmResult): number {
  return Math.max(0, count(obj(obj(obj(obj(arm.stats)['proxy'])['extproc'])['retries'])['retried']));
}

/**
 * `steady`: every arm answered with no non-2xx; the cache arms' counts hang together (`checkCache`), the C arms hit
 * their cache, the cache-off arms with ext_proc open one stream per request; every ratio and target is this run's
 * own; with `--tracing on (ratio 1)` each proxy arm exported at least three spans per request (server, lookup,
 * upstream).
 */
export function checkSteadyReport(report: BenchReport): string[] {
  const p = new Problems();
  checkArmsRan(report, 'steady', p);
  for (const arm of report.arms) {
    checkAnswered(arm, p, { non2xx: true });
    if (arm.name.startsWith('C')) {
      if (p.expect(arm.cache !== undefined && arm.cache.hits > 0, `${arm.name} has no cache hits (${JSON.stringify(arm.cache)})`)) checkCache(arm, report, p);
    } else if (arm.cache) {
      checkCache(arm, report, p);
    } else if (arm.components.some((x) => x.component === 'extproc')) {
      // Cache off: one ext_proc stream per request, within the same slack at the window's ends; a stream the client
      // opened again for the same request (a retry after the processor's connection failed) is its own count.
      const slack = windowSlack(report, arm);
      const retried = extprocRetriesOf(arm);
      p.expect(
        arm.extprocStreams !== null && Math.abs(arm.extprocStreams - retried - arm.requests) <= slack,
        `${arm.name} opened ${String(arm.extprocStreams)} ext_proc streams (${retried} of them retries) for ${arm.requests} requests (slack ${slack})`,
      );
    }
  }
  checkRatios(report, p);
  const c = report.arms.find((a) => a.name === 'C');
  const floor = report.arms.find((a) => a.name === 'floor');
  const floorTarget = findTarget(report, p, 'C >= 95% of floor', (t) => t.name.startsWith('C >= 95% of floor'));
  const cpuTarget = findTarget(report, p, 'C proxy CPU per request', (t) => t.name.startsWith('C proxy CPU per request'));
  if (c && floor) {
    const share = c.rps / floor.rps;
    expectStatus(p, floorTarget, share >= FLOOR_TARGET, `C/floor = ${share}`);
    const cf = front(c);
    const ff = front(floor);
    if (p.expect(cf !== undefined && ff !== undefined && ff > 0, 'C or floor has no front-process CPU')) expectStatus(p, cpuTarget, (cf as number) / (ff as number) <= CPU_TARGET, `proxy ${cf} ms ÷ floor ${ff} ms per request`);
  } else {
    p.expect(floorTarget?.status === 'n/a' && cpuTarget?.status === 'n/a', 'the floor targets are judged although C or floor did not run');
  }
  const tracing = String(report.settings['tracing'] ?? 'off');
  if (tracing !== 'off') {
    for (const arm of report.arms.filter((a) => a.components.some((x) => x.component === 'proxy'))) {
      const spans = arm.tracedSpans;
      if (!p.expect(typeof spans === 'number', `${arm.name}: tracing is ${tracing} but the report has no span count`)) continue;
      if (tracing === 'on (ratio 1)') p.expect((spans as number) >= 3 * arm.requests, `${arm.name}: ${String(spans)} spans for ${arm.requests} measured requests (at least 3 each)`);
    }
  }
  return p.list;
}

// ---- faults -------------------------------------------------------------------------------------------------

/**
 * `faults`: every phase is reported and saw answers, the kill was felt (connects failed or upstreams reset, and
 * requests re-ran), nothing failed before the faults, nothing was delivered twice, the proxy's count of 502s for
 * non-replayable resets fits the client's, and each fault's targets are the ones its phase's counts give.
 */
export function checkFaultsReport(report: BenchReport): string[] {
  const p = new Problems();
  checkArmsRan(report, 'faults', p);
  checkRatios(report, p);
  for (const arm of report.arms) {
    const f = arm.faults;
    if (!p.expect(f !== undefined, `${arm.name} has no faults block`)) continue;
    const phases = f!.phases;
    const names = phases.map((x) => x.name);
    if (!p.expect(JSON.stringify(names) === JSON.stringify(FAULT_PHASES), `${arm.name} phases are ${names.join(', ')}`)) continue;
    for (const x of phases) p.expect(x.requests > 0, `${arm.name}: ${x.name} saw no answer`);
    p.expect(f!.workerProcesses === num(report.settings['workers']), `${arm.name}: ${f!.workerProcesses} worker processes, the run asked for ${String(report.settings['workers'])}`);
    p.expect(f!.killedActors > 0, `${arm.name}: the killed worker hosted no actor`);
    const killed = phases[1] as FaultPhase;
    p.expect(killed.connectFailures + killed.resets > 0, `${arm.name}: the proxy did not feel the kill (no failed connect, no reset)`);
    p.expect(killed.reruns > 0, `${arm.name}: no request re-ran after the kill`);
    p.expect((phases[0] as FaultPhase).non2xx === 0, `${arm.name}: ${(phases[0] as FaultPhase).non2xx} non-2xx before the faults`);
    p.expect(arm.duplicates === 0, `${arm.name}: ${String(arm.duplicates)} duplicate deliveries`);
    // The 502s the proxy reports as resets of non-replayable requests already written are its own count, never
    // more than the 502s the client saw, nor than the resets it counted.
    for (const x of phases) {
      p.expect(x.non2xxNotReplayable <= (x.statusCounts['502'] ?? 0) && x.non2xxNotReplayable <= x.resetsNotReplayable, `${arm.name}: ${x.name}: ${x.non2xxNotReplayable} non-replayable 502s for ${x.statusCounts['502'] ?? 0} client 502s and ${x.resetsNotReplayable} such resets`);
    }
    const total = (k: 'resets' | 'resetsNotReplayable'): number => sum(phases.map((x) => x[k]));
    p.expect(total('resetsNotReplayable') <= total('resets'), `${arm.name}: ${total('resetsNotReplayable')} non-replayable resets of ${total('resets')} resets`);
    // Each fault's targets from its phase's own counts: no client-visible error (in (a), none but those resets),
    // and during the outages enough misses that the first says something about misses.
    for (const [prefix, index] of [['(a)', 1], ['(b)', 2], ['(c)', 3]] as const) {
      const phase = phases[index] as FaultPhase;
      p.expect(phase.hits + phase.misses > 0, `${arm.name}: ${phase.name} counted no cache lookup`);
      const excused = prefix === '(a)' ? phase.non2xxNotReplayable : 0;
      const t = findTarget(report, p, `${arm.name}: ${prefix} no client-visible error`, (x) => x.name.startsWith(`${arm.name}: ${prefix} no client-visible error`));
      expectStatus(p, t, phase.non2xx - excused + phase.errors === 0, `${phase.non2xx} non-2xx (${excused} excused) and ${phase.errors} errors`);
      if (prefix === '(a)') continue;
      const m = findTarget(report, p, `${arm.name}: ${prefix} at least ${MIN_OUTAGE_MISSES} misses`, (x) => x.name.startsWith(`${arm.name}: ${prefix} at least ${MIN_OUTAGE_MISSES} misses`));
      expectStatus(p, m, phase.misses >= MIN_OUTAGE_MISSES, `${phase.misses} misses`);
    }
    p.expect(f!.coldRequests > 0, `${arm.name}: no request for a cold actor went out during the outages`);
    const connects = findTarget(report, p, `${arm.name}: (a) failed connects per proxy process`, (x) => x.name.startsWith(`${arm.name}: (a) failed connects per proxy process`));
    expectStatus(p, connects, killed.connectFailures / Math.max(1, f!.proxyProcesses) <= 1, `${killed.connectFailures} failed connects in ${f!.proxyProcesses} proxy process(es)`);
  }
  return p.list;
}

// ---- grpc ---------------------------------------------------------------------------------------------------

/**
 * `grpc`: every call of every arm answered OK (the count the settings give), to one worker; each round's sums
 * are the sums of its calls, a call streams within its duration within the round's wall time; the overlap
 * ratios, the wall ÷ one call figure and both targets are the ones the arm's own numbers give; with a TTL longer
 * than the arm's run, every measured call through the proxy was a cache hit.
 */
export function checkGrpcReport(report: BenchReport): string[] {
  const p = new Problems();
  checkArmsRan(report, 'grpc', p);
  checkRatios(report, p);
  const K = num(report.settings['grpcCalls']) ?? NaN;
  const rounds = num(report.settings['grpcRounds']) ?? NaN;
  const replies = num(report.settings['grpcReplies']) ?? NaN;
  const calls = grpcCallCount(K, rounds);
  const worker = report.arms[0]?.grpc?.worker;
  for (const arm of report.arms) {
    const g = arm.grpc;
    if (!p.expect(g !== undefined, `${arm.name} has no grpc block`)) continue;
    const n = arm.name;
    p.expect(arm.requests === calls, `${n}: ${arm.requests} calls, the settings give ${calls}`);
    p.expect(JSON.stringify(arm.statusCounts) === JSON.stringify({ OK: calls }), `${n}: not every call answered OK: ${JSON.stringify(arm.statusCounts)}`);
    p.expect(arm.errors === 0, `${n}: ${arm.errors} errors`);
    p.expect(g!.concurrency === K && g!.repliesPerCall === replies, `${n}: ${g!.concurrency} calls of ${g!.repliesPerCall} replies per round, the settings give ${K} of ${replies}`);
    p.expect(g!.worker === worker, `${n} called worker ${g!.worker}, the first arm ${String(worker)}`);
    p.expect(g!.unaryActor !== g!.streamActor, `${n}: the unary calls go to the streaming actor ${g!.streamActor}`);
    p.expect(g!.aloneMs.length === Math.max(3, rounds), `${n}: ${g!.aloneMs.length} calls alone`);
    p.expect(g!.rounds.length === rounds, `${n}: ${g!.rounds.length} rounds of ${rounds}`);
    g!.rounds.forEach((r, k) => {
      p.expect(r.callMs.length === K && r.streamMs.length === K, `${n} round ${k + 1}: ${r.callMs.length} durations and ${r.streamMs.length} streaming times for ${K} calls`);
      p.expect(r.errors === 0, `${n} round ${k + 1}: ${r.errors} errors`);
      p.expect(close(r.callMsSum, sum(r.callMs)), `${n} round ${k + 1}: ${r.callMsSum} is not the sum of ${r.callMs.join(', ')}`);
      p.expect(close(r.streamMsSum, sum(r.streamMs)), `${n} round ${k + 1}: ${r.streamMsSum} is not the sum of ${r.streamMs.join(', ')}`);
      // A call streams within its own duration (it asked for replies, so it streamed at all), which lies within the round's wall time.
      r.streamMs.forEach((s, i) => {
        const d = r.callMs[i] ?? NaN;
        p.expect(s > 0 && s <= d + 1e-9 && d <= r.wallMs + 1e-9, `${n} round ${k + 1} call ${i}: streaming ${s} ms, duration ${d} ms, wall ${r.wallMs} ms`);
      });
    });
    const wall = sum(g!.rounds.map((r) => r.wallMs));
    const overlap = sum(g!.rounds.map((r) => r.streamMsSum)) / wall;
    const durationOverlap = sum(g!.rounds.map((r) => r.callMsSum)) / wall;
    p.expect(close(g!.overlap, overlap), `${n}: overlap ${g!.overlap} is not ${overlap}`);
    p.expect(close(g!.durationOverlap, durationOverlap), `${n}: duration overlap ${g!.durationOverlap} is not ${durationOverlap}`);
    p.expect(g!.overlap > 0 && g!.overlap <= g!.durationOverlap + 1e-9 && g!.durationOverlap <= K + 1e-9, `${n}: not 0 < overlap ${g!.overlap} <= duration overlap ${g!.durationOverlap} <= ${K}`);
    p.expect(close(g!.wallPerCall, g!.wallP50Ms / g!.aloneP50Ms), `${n}: wall ÷ one call ${g!.wallPerCall} is not ${g!.wallP50Ms} / ${g!.aloneP50Ms}`);
    p.expect(g!.rounds.some((r) => r.wallMs === g!.wallP50Ms) && g!.aloneMs.includes(g!.aloneP50Ms), `${n}: the medians ${g!.wallP50Ms} and ${g!.aloneP50Ms} are not measured values`);
    p.expect(g!.unaryWhileStreaming.length === rounds && g!.unaryWhileStreaming.every((s) => s.ok), `${n}: unary calls beside a stream: ${JSON.stringify(g!.unaryWhileStreaming)}`);
    const ot = findTarget(report, p, `${n}: ${K} concurrent streaming calls overlap`, (t) => t.name.startsWith(`${n}: ${K} concurrent streaming calls to one worker overlap`));
    expectStatus(p, ot, g!.wallP50Ms <= GRPC_OVERLAP_TARGET * g!.aloneP50Ms, `wall p50 ${g!.wallP50Ms} ms vs one call ${g!.aloneP50Ms} ms`);
    const ut = findTarget(report, p, `${n}: a unary call answered while a stream is open`, (t) => t.name === `${n}: a unary call to the same worker is answered while a stream is open`);
    expectStatus(p, ut, g!.unaryWhileStreaming.every((s) => s.ok && s.streamOpen), 'the unary samples');
    if (arm.cache) {
      const { hits, misses } = arm.cache;
      // The warm-up learned both bindings; with a TTL the arm's run does not outlive, each measured call is one hit.
      const ttlMs = num(report.settings['cacheTtlMs']) ?? 0;
      const warmupS = num(report.settings['warmupS']) ?? 0;
      if (ttlMs >= (warmupS + arm.durationS) * 1000) p.expect(hits === arm.requests && misses === 0, `${n}: ${hits} hits and ${misses} misses for ${arm.requests} calls; every one should hit`);
      else p.expect(hits + misses >= arm.requests, `${n}: ${hits} hits + ${misses} misses for ${arm.requests} calls`);
    }
  }
  return p.list;
}

// ---- fleet --------------------------------------------------------------------------------------------------

/**
 * `fleet`: every arm answered, its counts hang together, the fleet-affinity arm ran its kill, rollout and scale
 * phases under load, and every correctness target was judged and met.
 */
export function checkFleetReport(report: BenchReport): string[] {
  const p = new Problems();
  checkArmsRan(report, 'fleet', p);
  checkRatios(report, p);
  for (const arm of report.arms) {
    checkAnswered(arm, p, { non2xx: true });
    p.expect(arm.fleet !== undefined, `${arm.name} has no fleet block`);
    if (arm.name === 'fleet-affinity') {
      const names = (arm.phases ?? []).map((x) => x.name);
      p.expect(JSON.stringify(names) === JSON.stringify(FLEET_PHASES), `fleet-affinity phases are ${names.join(', ') || 'none'}`);
      for (const x of arm.phases ?? []) p.expect(x.requests > 0, `fleet-affinity: the ${x.name} phase saw no answer`);
    }
  }
  const correctness = report.targets.filter((t) => t.correctness === true);
  p.expect(correctness.length > 0, 'no correctness target is reported');
  for (const t of correctness) p.expect(t.status === 'met', `correctness target "${t.name}" is ${t.status}: ${t.detail}`);
  return p.list;
}

// ---- side-by-side -------------------------------------------------------------------------------------------

/** The ratios a side-by-side run reports, by rule: every arm to the first, C to floor-ingress, another build and the control to C. */
function sideBySideRatioNames(arms: readonly string[]): string[] {
  const base = arms[0] as string;
  const out = arms.slice(1).map((a) => `${a} ÷ ${base}`);
  if (base !== 'floor-ingress' && arms.includes('floor-ingress') && arms.includes('C')) out.push('C ÷ floor-ingress');
  if (base !== 'C' && arms.includes('C')) for (const a of arms) if (a.startsWith('C@') || a === 'C copy') out.push(`${a} ÷ C`);
  return out;
}

/**
 * `side-by-side`: every arm answered and has a CPU per request in every round, loaded for the round's length
 * (and, with `--rate`, no more than that rate allows); each ratio is the mean of its rounds' own ratios.
 */
export function checkSideBySideReport(report: SideBySideReport): string[] {
  const p = new Problems();
  p.expect(report.scenario === 'side-by-side', `the report is of scenario ${String(report.scenario)}, not side-by-side`);
  p.expect(report.failures.length === 0, `the run recorded failures: ${report.failures.join('; ')}`);
  const s = report.settings;
  p.expect(JSON.stringify(report.arms) === JSON.stringify(s['arms']) && report.arms.length >= 2, `arms ${report.arms.join(',')} are not the run's ${String(s['arms'])}`);
  const rounds = num(s['rounds']) ?? NaN;
  const durationS = num(s['durationS']) ?? NaN;
  const rate = num(s['ratePerArm']);
  p.expect(report.rounds.length === rounds && report.requests.length === rounds && report.seconds.length === rounds, `${report.rounds.length} rounds (${report.requests.length} request counts, ${report.seconds.length} durations) of ${rounds}`);
  report.rounds.forEach((round, k) => {
    for (const arm of report.arms) {
      const us = round[arm];
      p.expect(us !== undefined && Number.isFinite(us) && us > 0, `round ${k + 1}: ${arm} CPU per request ${String(us)}`);
      const answered = report.requests[k]?.[arm] ?? 0;
      p.expect(answered > 0, `round ${k + 1}: ${arm} answered nothing`);
      // A round overruns its --duration on a busy machine, never falls short of it. With --rate autocannon lets
      // each connection send its share of the rate per second, counted again on a 1 s timer from its start, so a
      // load that took t seconds sends at most rate × (⌈t⌉ + 1); a closed loop sends many times that.
      const took = report.seconds[k]?.[arm] ?? NaN;
      p.expect(took >= durationS - 0.5 && took < durationS + 60, `round ${k + 1}: ${arm} loaded for ${took} s of ${durationS}`);
      if (rate !== undefined) p.expect(answered <= rate * (Math.ceil(took) + 1), `round ${k + 1}: ${arm} answered ${answered} in ${took} s at --rate ${rate}`);
    }
  });
  const names = report.ratios.map((r) => `${r.arm} ÷ ${r.base}`);
  const want = sideBySideRatioNames(report.arms);
  p.expect(JSON.stringify(names) === JSON.stringify(want), `ratios ${names.join(', ')} are not ${want.join(', ')}`);
  // Each ratio is the mean of the rounds' own ratios (not a ratio of means, not a stale number).
  for (const r of report.ratios) {
    const perRound = report.rounds.map((round) => (round[r.arm] as number) / (round[r.base] as number)).filter((x) => Number.isFinite(x) && x > 0);
    p.expect(r.n === report.rounds.length && perRound.length === r.n, `${r.arm} ÷ ${r.base}: ${r.n} rounds of ${report.rounds.length}`);
    p.expect(close(r.mean, sum(perRound) / perRound.length), `${r.arm} ÷ ${r.base}: mean ${r.mean}, rounds ${perRound.join(', ')}`);
  }
  return p.list;
}

// ---- egress --------------------------------------------------------------------------------------------------

/** Over the TTL, what a revocation may take: the ext_proc deadline (`--egress-extproc-timeout-ms`) and a second. */
const REVOCATION_SLACK_MS = 3000;

/**
 * The egress scenario: every tunnel answered 200 and carried its answer; egress-A asked the control plane once per
 * CONNECT (GetActor and the policy, give or take the tunnels in flight as the window opened and closed), egress-C at
 * most once per actor and destination per TTL window (plus the window's first), and its cache saw every tunnel.
 * egress-C's revocation phase: every tunnel held open was closed once its actor's policy was removed, the last of
 * them within the proxy's bound (one TTL plus one ext_proc round trip, that is at most its 2 s deadline, plus a
 * second for a busy machine's timers).
 */
export function checkEgressReport(report: BenchReport): string[] {
  const p = new Problems();
  checkArmsRan(report, 'egress', p);
  const inFlight = num(report.settings['connections']) ?? NaN;
  const actors = 50;
  const ttlMs = num(report.settings['cacheTtlMs']) ?? NaN;
  for (const arm of report.arms) {
    const n = arm.name;
    const e = arm.egress;
    if (!p.expect(e !== undefined, `${n} has no egress block`)) continue;
    p.expect(arm.requests > 0 && arm.non2xx === 0 && arm.errors === 0, `${n}: ${arm.requests} tunnels, ${arm.non2xx} not 200, ${arm.errors} failed`);
    p.expect(e!.tunnels === arm.requests, `${n}: egress.tunnels ${e!.tunnels}, requests ${arm.requests}`);
    if (n === 'egress-A') {
      p.expect(Math.abs(e!.getActorCalls - arm.requests) <= inFlight, `egress-A: ${e!.getActorCalls} GetActor calls for ${arm.requests} tunnels`);
      p.expect(Math.abs(e!.policyCalls - arm.requests) <= inFlight, `egress-A: ${e!.policyCalls} policy calls for ${arm.requests} tunnels`);
      p.expect(e!.cache === null, 'egress-A: a verdict cache reported with the cache off');
    } else if (n === 'egress-C') {
      const windows = Math.ceil((arm.durationS * 1000) / ttlMs) + 1;
      p.expect(e!.getActorCalls <= actors * windows, `egress-C: ${e!.getActorCalls} GetActor calls, more than ${actors} actors × ${windows} TTL windows`);
      if (p.expect(e!.cache !== null, 'egress-C: no verdict cache reported')) {
        const looked = e!.cache!.hits + e!.cache!.misses;
        p.expect(Math.abs(looked - arm.requests) <= inFlight, `egress-C: the cache saw ${looked} CONNECTs for ${arm.requests} tunnels`);
      }
      const r = arm.revocation;
      if (p.expect(r !== undefined, 'egress-C: no revocation phase reported')) {
        p.expect(r!.tunnelsOpen === 20 && r!.tunnelsClosed === r!.tunnelsOpen, `egress-C revocation: ${r!.tunnelsClosed} of ${r!.tunnelsOpen} tunnels closed (20 held open)`);
        const bound = (r!.ttlMs ?? ttlMs) + REVOCATION_SLACK_MS;
        p.expect(r!.lagMs !== null && r!.lagMs.max <= bound, `egress-C revocation: lag max ${r!.lagMs?.max ?? 'none'} ms, over ${bound} ms`);
      }
    }
  }
  const targets = report.arms.some((a) => a.revocation !== undefined) ? 4 : 2;
  p.expect(report.targets.length === targets && report.targets.every((t) => t.status !== 'n/a'), `egress targets: ${report.targets.map((t) => `${t.name} ${t.status}`).join('; ')}`);
  return p.list;
}

// ---- heavy-filter ---------------------------------------------------------------------------------------------

/** The heavy-filter arms' pool threads (a literal copy: the check must fail if an arm runs with others). */
const HEAVY_WORKERS: Readonly<Record<string, number>> = { 'heavy-inline': 0, 'heavy-offload': 1 };

/**
 * `heavy-filter`: every arm answered every request 2xx, its two kinds add up to its requests with one heavy POST in
 * every `heavyEvery`; the filter ran once per heavy POST where it is loaded (the load waits for its requests in
 * flight before the counts are read), on the event loop in heavy-inline and on the pool in heavy-offload (the
 * overflow of a full queue inline), and not at all in heavy-none; no result was stale and no call failed; the
 * target's status and the inline ratio are the run's own numbers.
 */
export function checkHeavyFilterReport(report: BenchReport): string[] {
  const p = new Problems();
  checkArmsRan(report, 'heavy-filter', p);
  for (const arm of report.arms) {
    const n = arm.name;
    checkAnswered(arm, p, { non2xx: true });
    const h = arm.heavyFilter;
    if (!p.expect(h !== undefined, `${n} has no heavyFilter block`)) continue;
    p.expect(arm.errors === 0 && h!.errors === 0, `${n}: ${arm.errors} requests without an answer, ${h!.errors} without a 2xx`);
    p.expect(h!.hits.requests + h!.heavy.requests === arm.requests, `${n}: ${h!.hits.requests} hits + ${h!.heavy.requests} heavy POSTs for ${arm.requests} requests`);
    const every = h!.heavyEvery;
    p.expect(Math.abs(h!.heavy.requests - Math.floor(arm.requests / every)) <= 1, `${n}: ${h!.heavy.requests} heavy POSTs of ${arm.requests} requests, not one in ${every}`);
    p.expect(h!.rounds > 0 && h!.workMs > 0, `${n}: the heavy work was not sized (${h!.rounds} rounds, ${h!.workMs} ms)`);
    const f = h!.filterOffload;
    if (!p.expect(f !== null, `${n}: the proxy reported no filterOffload counts`)) continue;
    const calls = f!.pool + f!.inline;
    p.expect(f!.stale === 0 && f!.errors === 0, `${n}: ${f!.stale} stale results, ${f!.errors} failed calls`);
    if (n === 'heavy-none') {
      p.expect(calls === 0, `heavy-none: ${calls} offloaded calls with no filter`);
      continue;
    }
    p.expect(calls === h!.heavy.requests, `${n}: ${calls} offloaded calls for ${h!.heavy.requests} heavy POSTs`);
    p.expect(f!.workers === HEAVY_WORKERS[n], `${n}: --filter-workers ${f!.workers}, not ${String(HEAVY_WORKERS[n])}`);
    if (n === 'heavy-inline') p.expect(f!.pool === 0, `heavy-inline: ${f!.pool} calls on a pool it does not have`);
    else p.expect(f!.pool > 0, `${n}: no call ran on the pool (${f!.inline} inline)`);
  }
  const none = report.arms.find((a) => a.name === 'heavy-none')?.heavyFilter;
  const offload = report.arms.find((a) => a.name === 'heavy-offload')?.heavyFilter;
  const inline = report.arms.find((a) => a.name === 'heavy-inline')?.heavyFilter;
  const target = findTarget(report, p, OFFLOAD_TARGET_NAME, (t) => t.name === OFFLOAD_TARGET_NAME);
  if (none !== undefined && offload !== undefined) expectStatus(p, target, offload.hits.p99Ms <= HEAVY_P99_TARGET * none.hits.p99Ms, `hits p99 ${offload.hits.p99Ms} ms vs ${none.hits.p99Ms} ms`);
  else p.expect(target?.status === 'n/a', `"${OFFLOAD_TARGET_NAME}" is judged although heavy-none or heavy-offload did not run`);
  const ratio = findTarget(report, p, INLINE_RATIO_NAME, (t) => t.name === INLINE_RATIO_NAME);
  if (none !== undefined && inline !== undefined && ratio !== undefined) {
    const want = (inline.hits.p99Ms / none.hits.p99Ms).toFixed(2);
    p.expect(ratio.status === 'reported' && (ratio.measured ?? '').includes(`${want}×`), `"${INLINE_RATIO_NAME}" states ${ratio.measured ?? ratio.status}, not ${want}×`);
  }
  return p.list;
}

// ---- dispatch -----------------------------------------------------------------------------------------------

export function isCheckedScenario(s: string): s is CheckedScenario {
  return (CHECKED_SCENARIOS as readonly string[]).includes(s);
}

/** The checks of `scenario` on a parsed report. */
export function checkReport(scenario: CheckedScenario, report: unknown): string[] {
  switch (scenario) {
    case 'steady':
      return checkSteadyReport(report as BenchReport);
    case 'faults':
      return checkFaultsReport(report as BenchReport);
    case 'grpc':
      return checkGrpcReport(report as BenchReport);
    case 'fleet':
      return checkFleetReport(report as BenchReport);
    case 'egress':
      return checkEgressReport(report as BenchReport);
    case 'heavy-filter':
      return checkHeavyFilterReport(report as BenchReport);
    case 'side-by-side':
      return checkSideBySideReport(report as SideBySideReport);
  }
}
