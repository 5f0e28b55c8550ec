/**
 * Pure report math and rendering: throughput ratios between arms, the performance targets (reported, never
 * asserted by timing), and the markdown that goes to stdout and to bench/results/<stamp>-<scenario>.md.
 */
import type { ArmName, ArmResult, BenchReport, FaultPhase, ScenarioName, TargetResult } from './types.js';
import { fleetTables, fleetTargets } from './fleet-report.js';
import { overloadTable, overloadTargets } from './overload-report.js';
import { egressTable, egressTargets } from './egress-report.js';
import { heavyTable, heavyTargets } from './heavy-report.js';
import { fmt, fmtInt, mb, pct, statusText, table } from './markdown.js';
import { legendMarkdown } from './legend.js';

export { fmt, fmtInt, pct } from './markdown.js';

/** The ratios the report always prints: numerator arm / denominator arm, by throughput. */
export const RATIO_PAIRS: readonly (readonly [ArmName, ArmName])[] = [
  ['C', 'A'],
  ['B1', 'A'],
  ['B2', 'A'],
  ['C', 'B2'],
  ['C', 'floor'],
  ['C', 'floor-1'],
  ['C', 'floor-ingress'],
  ['floor-ingress', 'floor'],
  ['C', 'direct'],
  ['C-mtls', 'C'],
  ['A-mtls', 'A'],
  ['A-extproc-mtls', 'A'],
];

/** Share of the floor's throughput the product arm must reach (C ≥ 95% of floor). */
export const FLOOR_TARGET = 0.95;
/** The most CPU per request the product's proxy may spend, as a multiple of the floor's (C ≤ 1.05× floor). */
export const CPU_TARGET = 1.05;

export function findArm(arms: readonly ArmResult[], name: ArmName): ArmResult | undefined {
  return arms.find((a) => a.name === name);
}

/** a / b, or null when either is missing or b is not positive. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined || !(b > 0) || !Number.isFinite(a)) return null;
  return a / b;
}

export function computeRatios(arms: readonly ArmResult[]): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const [n, d] of RATIO_PAIRS) out[`${n}/${d}`] = ratio(findArm(arms, n)?.rps, findArm(arms, d)?.rps);
  return out;
}

/** Calls per 1,000 requests (null when the count is unknown or there were no requests). */
export function per1k(calls: number | null, requests: number): number | null {
  if (calls === null || requests <= 0) return null;
  return (calls * 1000) / requests;
}

export interface TargetContext {
  /** Actors the load spreads over. */
  readonly actors: number;
  readonly cacheTtlMs: number;
}

/**
 * The most ResumeActor calls a cache-on arm may make in a window: one per actor per TTL window the measurement
 * touches (ceil(duration / TTL)), plus one cold call per actor that was suspended when the window opened.
 */
export function resumeCallBound(actors: number, durationS: number, cacheTtlMs: number, suspendedAtStart: number): number {
  const windows = Math.max(1, Math.ceil((durationS * 1000) / cacheTtlMs - 1e-9));
  return actors * windows + suspendedAtStart;
}

/** CPU ms per request of the process in front of the workers (proxy or floor), null when unknown. */
export function frontCpu(arm: ArmResult): number | null {
  return arm.components.find((c) => c.component === 'proxy' || c.component === 'floor')?.cpuMsPerRequest ?? null;
}

/** ResumeActor calls per actor per TTL window the measurement touched (1 or less: one table for every process). */
export function resumePerActorPerTtl(arm: ArmResult, actors: number, cacheTtlMs: number): number | null {
  if (arm.resumeCalls === null || actors <= 0) return null;
  const windows = Math.max(1, Math.ceil((arm.durationS * 1000) / cacheTtlMs - 1e-9));
  return arm.resumeCalls / (actors * windows);
}

export function evaluateTargets(scenario: ScenarioName, arms: readonly ArmResult[], ctx: TargetContext): TargetResult[] {
  const out: TargetResult[] = [];
  // The product arm: C, or with --target the running deployment (judged by the same bound).
  const c = findArm(arms, 'C') ?? findArm(arms, 'target');
  const a = findArm(arms, 'A');
  const floor = findArm(arms, 'floor');
  if (scenario === 'steady' || scenario === 'many-actors') {
    const share = ratio(c?.rps, floor?.rps);
    out.push(
      share === null
        ? { name: `C >= ${pct(FLOOR_TARGET)} of floor`, status: 'n/a', detail: 'needs arms C and floor in the same run' }
        : {
            name: `C >= ${pct(FLOOR_TARGET)} of floor`,
            status: share >= FLOOR_TARGET ? 'met' : 'not-met',
            measured: `C throughput ${pct(share)} of floor's`,
            bound: `≥ ${pct(FLOOR_TARGET)}`,
            detail: `C ${fmtInt(c!.rps)} req/s = ${pct(share)} of floor ${fmtInt(floor!.rps)} req/s; front CPU per request: proxy ${fmt(frontCpu(c!), 3)} ms vs floor ${fmt(frontCpu(floor!), 3)} ms`,
          },
    );
    const cpu = ratio(c ? frontCpu(c) : null, floor ? frontCpu(floor) : null);
    out.push(
      cpu === null
        ? { name: `C proxy CPU per request <= ${CPU_TARGET}x floor's`, status: 'n/a', detail: 'needs arms C and floor with process stats' }
        : {
            name: `C proxy CPU per request <= ${CPU_TARGET}x floor's`,
            status: cpu <= CPU_TARGET ? 'met' : 'not-met',
            measured: `C proxy CPU per request ${cpu.toFixed(2)}× floor's`,
            bound: `≤ ${CPU_TARGET}×`,
            detail: `${cpu.toFixed(2)}x (proxy ${fmt(frontCpu(c!), 3)} ms vs floor ${fmt(frontCpu(floor!), 3)} ms); all server processes ${fmt(ratio(c!.cpuMsPerRequest, floor!.cpuMsPerRequest), 2)}x (C ${fmt(c!.cpuMsPerRequest, 3)} ms incl. extproc and stub vs floor ${fmt(floor!.cpuMsPerRequest, 3)} ms)`,
          },
    );
    const ca = ratio(c?.rps, a?.rps);
    out.push(
      ca === null
        ? { name: 'C/A throughput', status: 'n/a', detail: 'needs arms C and A' }
        : {
            name: 'C/A throughput',
            status: 'reported',
            measured: `C throughput ${ca.toFixed(2)}× A's`,
            detail: `${ca.toFixed(2)}x; ResumeActor per 1k requests ${fmt(a!.resumeCallsPer1k, 1)} (A) -> ${fmt(c!.resumeCallsPer1k, 2)} (C)`,
          },
    );
  }
  if (scenario === 'steady' || scenario === 'many-actors') {
    if (c && c.resumeCalls !== null) {
      const bound = resumeCallBound(ctx.actors, c.durationS, ctx.cacheTtlMs, c.suspendedAtStart ?? 0);
      out.push({
        name: 'C ResumeActor calls <= 1 per actor per TTL + cold calls',
        status: c.resumeCalls <= bound ? 'met' : 'not-met',
        measured: `C ResumeActor calls ${c.resumeCalls}`,
        bound: `≤ ${bound}: 1 per actor per TTL + cold calls`,
        detail: `${c.resumeCalls} calls in ${c.durationS.toFixed(1)} s = ${fmt(resumePerActorPerTtl(c, ctx.actors, ctx.cacheTtlMs), 2)} per actor per TTL; bound ${bound} (${ctx.actors} actors, TTL ${ctx.cacheTtlMs} ms, ${c.suspendedAtStart ?? 0} cold)`,
      });
    } else {
      out.push({ name: 'C ResumeActor calls <= 1 per actor per TTL + cold calls', status: 'n/a', detail: 'needs arm C with control-plane stats' });
    }
  }
  if (scenario === 'churn' || scenario === 'steady-post') {
    for (const arm of arms) {
      out.push({
        name: `${arm.name}: client-visible non-2xx = 0`,
        status: arm.non2xx + arm.errors === 0 ? 'met' : 'not-met',
        measured: `${arm.name}: ${arm.non2xx + arm.errors} client-visible non-2xx or errors`,
        bound: '= 0',
        detail: `${arm.non2xx} non-2xx, ${arm.errors} errors of ${arm.requests} requests`,
      });
      out.push(duplicatesTarget(arm));
    }
  }
  if (scenario === 'faults') out.push(...faultTargets(arms));
  if (scenario === 'grpc') out.push(...grpcTargets(arms));
  if (scenario === 'fleet') out.push(...fleetTargets(arms));
  if (scenario === 'overload') out.push(...overloadTargets(arms));
  if (scenario === 'egress') out.push(...egressTargets(arms));
  if (scenario === 'heavy-filter') out.push(...heavyTargets(arms));
  if (scenario === 'cold') {
    for (const arm of arms) {
      const cold = arm.cold;
      out.push(
        !cold || arm.resumeCalls === null
          ? { name: `${arm.name}: 1 ResumeActor per cold actor`, status: 'n/a', detail: 'no control-plane stats' }
          : {
              name: `${arm.name}: 1 ResumeActor per cold actor`,
              status: cold.resumeCallsPerActor <= 1 && cold.actorsAnswered === cold.actors ? 'met' : 'not-met',
              measured: `${arm.name}: ${cold.resumeCallsPerActor.toFixed(2)} ResumeActor calls per cold actor, ${cold.actorsAnswered}/${cold.actors} answered`,
              bound: '≤ 1, all answered',
              detail: `${cold.resumeCallsPerActor.toFixed(2)} calls per actor (${cold.resumeOkPerActor.toFixed(2)} OK), ${cold.actorsAnswered}/${cold.actors} actors answered`,
            },
      );
    }
  }
  return out;
}

/** No request delivered twice (the one target that fails a run). */
function duplicatesTarget(arm: ArmResult): TargetResult {
  return arm.duplicates === undefined
    ? { name: `${arm.name}: duplicate deliveries = 0`, status: 'n/a', detail: 'stub stats unavailable' }
    : { name: `${arm.name}: duplicate deliveries = 0`, status: arm.duplicates === 0 ? 'met' : 'not-met', detail: `${arm.duplicates} duplicates` };
}

/** Misses an outage phase must see for its "no client-visible error" to prove anything about misses. */
export const MIN_OUTAGE_MISSES = 20;

/** The faults scenario's targets, per arm: judged from counts, reported, never asserted. */
export function faultTargets(arms: readonly ArmResult[]): TargetResult[] {
  return arms.flatMap((arm) => {
    const f = arm.faults;
    if (!f) return [];
    const out: TargetResult[] = [];
    const phase = (prefix: string) => f.phases.find((p) => p.name.startsWith(prefix));
    const killed = phase('(a)');
    out.push({
      name: `${arm.name}: (a) the killed worker's actors answer 200 from their new worker`,
      status: f.killedActorsMoved === f.killedActors ? 'met' : 'not-met',
      detail: `${f.killedActorsMoved}/${f.killedActors} actors of ${f.killedWorker}; in the phase ${killed?.non2xx ?? 0} non-2xx, ${killed?.errors ?? 0} errors (${killed ? statusText(killed) : '–'})`,
    });
    const perProcess = (killed?.connectFailures ?? 0) / Math.max(1, f.proxyProcesses);
    out.push({
      name: `${arm.name}: (a) failed connects per proxy process = 1`,
      status: perProcess <= 1 ? 'met' : 'not-met',
      detail: `${fmt(perProcess, 1)} per process (${killed?.connectFailures ?? 0} in ${f.proxyProcesses}); ${killed?.failedFast ?? 0} failed fast after it; evictions ${countsText(killed?.evictions)}`,
    });
    for (const [prefix, what] of [['(a)', 'worker killed'], ['(b)', 'ext_proc restart'], ['(c)', 'control plane down']] as const) {
      const p = phase(prefix);
      if (!p) continue;
      out.push(prefix === '(a)' ? killedPhaseErrorTarget(arm.name, p, what) : phaseErrorTarget(arm.name, prefix, p, what));
      if (prefix === '(a)') continue;
      out.push({
        name: `${arm.name}: ${prefix} at least ${MIN_OUTAGE_MISSES} misses during the outage (${what})`,
        status: p.misses >= MIN_OUTAGE_MISSES ? 'met' : 'not-met',
        detail: `${p.misses} misses (${f.coldRequests} requests for cold actors at ${f.coldPerSecond}/s during (b) and (c)); ext_proc stream retries ${p.extprocRetries}; ResumeActor ${countsText(p.resumeByCode)}`,
      });
    }
    out.push(duplicatesTarget(arm));
    return out;
  });
}

function phaseCounts(p: FaultPhase): string {
  return `${fmtInt(p.requests)} answers; ${p.misses} misses, ${p.hits} hits in ${fmt(p.durationS, 1)} s`;
}

/** (b), (c): no non-2xx and no failed request at all. */
function phaseErrorTarget(arm: string, prefix: string, p: FaultPhase, what: string): TargetResult {
  const failed = p.non2xx + p.errors;
  return {
    name: `${arm}: ${prefix} no client-visible error (${what})`,
    status: failed === 0 ? 'met' : 'not-met',
    detail: `${failed} non-2xx or errors (${statusText(p)}) of ${phaseCounts(p)}${p.resets > 0 ? `; ${p.resets} upstream resets` : ''}`,
  };
}

/**
 * (a): no non-2xx and no failed request other than the requests the proxy reports as reset after they were
 * written whole with a method never sent twice (the POSTs in flight on the worker when it was killed): the actor
 * may have received them, so they fail rather than risk a second delivery. Their count is the proxy's own
 * (`non2xxNotReplayable`), and is reported; any other non-2xx, or any request without an answer, fails the target.
 */
export function killedPhaseErrorTarget(arm: string, p: FaultPhase, what: string): TargetResult {
  const other = p.non2xx - p.non2xxNotReplayable + p.errors;
  const unmatched = p.resetsNotReplayable - p.non2xxNotReplayable;
  return {
    name: `${arm}: (a) no client-visible error other than resets of non-replayable requests already written (${what})`,
    status: other === 0 ? 'met' : 'not-met',
    detail:
      `${other} other non-2xx or errors; ${p.non2xxNotReplayable} × 502 resets of non-replayable requests already written (reported by the proxy; ` +
      `not re-run: the actor may have received them)${unmatched > 0 ? `, ${unmatched} more counted by the proxy than 502s the client saw in the phase` : ''}; ` +
      `${statusText(p)} of ${phaseCounts(p)}; ${p.resets} upstream resets`,
  };
}

/** The most a round of K concurrent streaming calls may take, in one call's time alone, to count as overlapping. */
export const GRPC_OVERLAP_TARGET = 2;

/** The grpc scenario's targets, per arm: judged from the run's own figures, reported, never asserted. */
export function grpcTargets(arms: readonly ArmResult[]): TargetResult[] {
  return arms.flatMap((arm): TargetResult[] => {
    const g = arm.grpc;
    if (!g) return [];
    const open = g.unaryWhileStreaming.filter((s) => s.ok && s.streamOpen).length;
    return [
      {
        name: `${arm.name}: ${g.concurrency} concurrent streaming calls to one worker overlap (wall time <= ${GRPC_OVERLAP_TARGET}x one call)`,
        status: g.aloneP50Ms > 0 && g.wallP50Ms <= GRPC_OVERLAP_TARGET * g.aloneP50Ms ? 'met' : 'not-met',
        detail: `round wall time p50 ${fmt(g.wallP50Ms, 1)} ms = ${fmt(g.wallPerCall, 2)}x one call alone (${fmt(g.aloneP50Ms, 1)} ms); overlap ratio ${fmt(g.overlap, 2)} (calls streaming at once: ${g.concurrency} when they run together, 1 when one at a time); client durations ÷ wall time ${fmt(g.durationOverlap, 2)} (${fmt((g.concurrency + 1) / 2, 1)} when one at a time)`,
      },
      {
        name: `${arm.name}: a unary call to the same worker is answered while a stream is open`,
        status: g.unaryWhileStreaming.length > 0 && open === g.unaryWhileStreaming.length ? 'met' : 'not-met',
        detail: `${open}/${g.unaryWhileStreaming.length} answered OK before the ${g.longStreamReplies}-reply stream ended; latency p50 ${fmt(g.unaryWhileStreamingP50Ms, 1)} ms, max ${fmt(g.unaryWhileStreamingMaxMs, 1)} ms beside the stream vs ${fmt(g.unaryAloneP50Ms, 1)} ms alone`,
      },
    ];
  });
}

/** True when a target that must hold for correctness (not speed) failed: duplicate deliveries, or one marked so. */
export function correctnessFailed(targets: readonly TargetResult[]): boolean {
  return targets.some((t) => t.status === 'not-met' && (t.correctness === true || t.name.includes('duplicate')));
}

// ---- formatting ---------------------------------------------------------------------------------------------

/** Short CPU breakdown, e.g. `proxy 0.031 · stub 0.012`. */
function cpuBreakdown(arm: ArmResult): string {
  return arm.components.map((c) => `${shortName(c.component)} ${fmt(c.cpuMsPerRequest, 3)}`).join(' · ') || '–';
}

function shortName(component: string): string {
  return component === 'apiserver-stub' ? 'stub' : component;
}

export function mainTable(arms: readonly ArmResult[]): string {
  return table(
    ['arm', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'ResumeActor', 'per 1k', 'ext_proc streams', 'per 1k', 'CPU ms/req', 'CPU ms/req by process', 'loadgen CPU ms/req', 'peak RSS MB'],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'r', 'l'],
    arms.map((a) => [
      a.name,
      fmtInt(a.rps),
      fmt(a.p50Ms),
      fmt(a.p90Ms),
      fmt(a.p99Ms),
      fmt(a.maxMs, 1),
      fmtInt(a.non2xx),
      fmtInt(a.errors),
      fmtInt(a.resumeCalls),
      fmt(a.resumeCallsPer1k, 2),
      fmtInt(a.extprocStreams),
      fmt(a.extprocStreamsPer1k, 2),
      fmt(a.cpuMsPerRequest, 3),
      cpuBreakdown(a),
      fmt(a.loadgen.cpuMsPerRequest, 3),
      a.components.map((c) => `${shortName(c.component)} ${mb(c.peakRssBytes)}`).join(' · ') || '–',
    ]),
  );
}

/** The short table for a README: throughput, latency, control-plane calls and CPU per request. */
export function summaryTable(arms: readonly ArmResult[]): string {
  return table(
    ['arm', 'req/s', 'p50 ms', 'p99 ms', 'ResumeActor / 1k req', 'ext_proc streams / 1k req', 'CPU ms/req (all processes)', 'CPU ms/req (proxy or floor)'],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    arms.map((a) => [a.name, fmtInt(a.rps), fmt(a.p50Ms), fmt(a.p99Ms), fmt(a.resumeCallsPer1k, 1), fmt(a.extprocStreamsPer1k, 1), fmt(a.cpuMsPerRequest, 3), fmt(frontCpu(a), 3)]),
  );
}

function scenarioTable(scenario: ScenarioName, arms: readonly ArmResult[]): string | null {
  if (scenario === 'churn' || scenario === 'steady-post') {
    return table(
      ['arm', 'requests', 'non-2xx', 'errors', 'evictions', 're-runs', 're-runs by number', 'duplicates', 'status codes'],
      ['l', 'r', 'r', 'r', 'r', 'r', 'l', 'r', 'l'],
      arms.map((a) => [a.name, fmtInt(a.requests), fmtInt(a.non2xx), fmtInt(a.errors), fmtInt(a.evictions), fmtInt(a.reruns), byNumberText(a.rerunsByAttempt), fmtInt(a.duplicates), statusText(a)]),
    );
  }
  if (scenario === 'faults') return faultsTable(arms);
  if (scenario === 'grpc') return grpcTable(arms);
  if (scenario === 'fleet') return fleetTables(arms);
  if (scenario === 'overload') return overloadTable(arms);
  if (scenario === 'egress') return egressTable(arms);
  if (scenario === 'heavy-filter') return heavyTable(arms);
  if (scenario === 'cold') {
    return table(
      ['arm', 'actors answered', 'concurrent per actor', 'first success p50 ms', 'p99 ms', 'max ms', 'ResumeActor per actor', 'OK per actor'],
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      arms.map((a) => [
        a.name,
        a.cold ? `${a.cold.actorsAnswered}/${a.cold.actors}` : '–',
        fmtInt(a.cold?.concurrentPerActor),
        fmt(a.cold?.firstSuccessP50Ms, 1),
        fmt(a.cold?.firstSuccessP99Ms, 1),
        fmt(a.cold?.firstSuccessMaxMs, 1),
        fmt(a.cold?.resumeCallsPerActor, 2),
        fmt(a.cold?.resumeOkPerActor, 2),
      ]),
    );
  }
  if (scenario === 'many-actors') {
    return table(
      ['arm', 'cache hits', 'misses', 'hit ratio', 'entries', 'LRU evictions', 'TTL evictions', 'ResumeActor'],
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      arms.map((a) => [
        a.name,
        fmtInt(a.cache?.hits),
        fmtInt(a.cache?.misses),
        a.cache ? pct(a.cache.hitRatio) : '–',
        fmtInt(a.cache?.entries),
        fmtInt(a.cache?.evictions['lru']),
        fmtInt(a.cache?.evictions['ttl']),
        fmtInt(a.resumeCalls),
      ]),
    );
  }
  return null;
}


/** `reason n` pairs, e.g. `stale 3 · connect 5` (– when empty). */
function countsText(counts: Readonly<Record<string, number>> | undefined): string {
  const parts = Object.entries(counts ?? {}).filter(([, n]) => n !== 0);
  return parts.length ? parts.map(([k, n]) => `${k} ${fmtInt(n)}`).join(' · ') : '–';
}

/** `#1 380 · #2 11`: re-runs by their number within a request. */
function byNumberText(byAttempt: Readonly<Record<string, number>> | undefined): string {
  if (byAttempt === undefined) return '–';
  return Object.entries(byAttempt).map(([k, n]) => `#${k} ${fmtInt(n)}`).join(' · ') || '–';
}

function grpcTable(arms: readonly ArmResult[]): string {
  return table(
    ['arm', 'calls', 'errors', 'status codes', 'one call alone p50 ms', 'K', 'K calls: wall p50 ms', 'wall ÷ one call', 'overlap ratio', 'Σ durations ÷ wall', 'unary alone p50 ms', 'unary beside a stream p50 ms', 'max ms', 'answered while the stream was open'],
    ['l', 'r', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    arms.map((a) => {
      const g = a.grpc;
      return [
        a.name,
        fmtInt(a.requests),
        fmtInt(a.errors),
        statusText(a),
        fmt(g?.aloneP50Ms, 1),
        fmtInt(g?.concurrency),
        fmt(g?.wallP50Ms, 1),
        fmt(g?.wallPerCall, 2),
        fmt(g?.overlap, 2),
        fmt(g?.durationOverlap, 2),
        fmt(g?.unaryAloneP50Ms, 1),
        fmt(g?.unaryWhileStreamingP50Ms, 1),
        fmt(g?.unaryWhileStreamingMaxMs, 1),
        g ? `${g.unaryWhileStreaming.filter((s) => s.ok && s.streamOpen).length}/${g.unaryWhileStreaming.length}` : '–',
      ];
    }),
  );
}

function faultsTable(arms: readonly ArmResult[]): string {
  return table(
    ['arm', 'phase', 's', 'requests', 'non-2xx', 'of them not replayable', 'errors', 'status codes', 'cache hits', 'misses', 'evictions by reason', 'failed connects', 'failed fast', 'resets', 're-runs', 'ext_proc retries', 'ResumeActor by code'],
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'l', 'r', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'l'],
    arms.flatMap((a) =>
      (a.faults?.phases ?? []).map((p) => [
        a.name,
        p.name,
        fmt(p.durationS, 1),
        fmtInt(p.requests),
        fmtInt(p.non2xx),
        fmtInt(p.non2xxNotReplayable),
        fmtInt(p.errors),
        statusText(p),
        fmtInt(p.hits),
        fmtInt(p.misses),
        countsText(p.evictions),
        fmtInt(p.connectFailures),
        fmtInt(p.failedFast),
        fmtInt(p.resets),
        fmtInt(p.reruns),
        fmtInt(p.extprocRetries),
        countsText(p.resumeByCode),
      ]),
    ),
  );
}

export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  const s = report.settings;
  const lines: string[] = [];
  lines.push(`## actor-edge bench: ${report.scenario} (${report.startedAt})`, '');
  lines.push(
    `Machine: ${m.cpus} × ${m.cpuModel}, ${(m.totalMemBytes / 2 ** 30).toFixed(1)} GiB, ${m.platform}, Node ${m.node}, load average at start ${m.loadAvg.map((x) => x.toFixed(2)).join(' ')}.`,
  );
  lines.push(`Settings: ${Object.entries(s).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`).join(', ')}.`, '');
  lines.push(summaryTable(report.arms), '', ...legendMarkdown(report.arms.map((a) => a.name)), 'Details:', '', mainTable(report.arms), '');
  const extra = scenarioTable(report.scenario, report.arms);
  if (extra) lines.push(extra, '');
  const ratios = Object.entries(report.ratios).filter(([, v]) => v !== null);
  if (ratios.length) lines.push(`Throughput ratios: ${ratios.map(([k, v]) => `${k} ${fmt(v, 2)}`).join(', ')}.`, '');
  if (report.targets.length) {
    lines.push(
      'Targets: what this run measured, what it is compared against, and whether it is met. Judged from this run\'s own',
      'numbers; a speed target not met is reported and does not fail the run, a correctness target (no duplicate',
      'delivery, no client-visible error where one is promised) not met fails it. `reported`: a figure with no bound;',
      '`n/a`: the run lacks an arm or a count the target needs.',
      '',
    );
    for (const t of report.targets) lines.push(`- ${targetLine(t)}`);
    lines.push('');
  }
  const notes = report.arms.flatMap((a) => a.notes.map((n) => `- ${a.name}: ${n}`));
  if (notes.length) lines.push('Notes:', '', ...notes, '');
  return lines.join('\n');
}

/** How a status reads in the report. */
export function verdict(status: TargetResult['status']): string {
  switch (status) {
    case 'met':
      return 'met';
    case 'not-met':
      return '**not met**';
    case 'reported':
      return 'reported';
    case 'n/a':
      return 'n/a';
  }
}

/**
 * One target as the report states it: `C proxy CPU per request 1.14× floor's (target ≤ 1.05×): **not met**. <detail>`;
 * a target with no measured value stated apart (older reports, the scenario-specific ones): `<name>: <verdict>. <detail>`.
 */
export function targetLine(t: TargetResult): string {
  const head = t.measured === undefined ? t.name : t.bound === undefined ? t.measured : `${t.measured} (target ${t.bound})`;
  return `${head}: ${verdict(t.status)}. ${t.detail}`;
}

/** `2025-01-02T03-04-05Z-steady`: the file stem of one run's outputs (sortable, no colons). */
export function fileStem(startedAt: string, scenario: string): string {
  return `${startedAt.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-')}-${scenario}`;
}
