/**
 * cold: every actor suspended at the start; then, all at once, --connections concurrent first requests to every
 * actor. Measures the time from the burst's start to each actor's first 2xx, and ResumeActor calls per actor
 * (target 1: concurrent callers of one actor must share one resume). Uses undici directly rather than
 * autocannon, because the per-actor first-success time needs to know which actor each answer belongs to.
 */
import { Pool } from 'undici';
import { readStub } from '../admin.js';
import { buildArmResult, type WindowStats } from '../arm-result.js';
import { summarize } from '../latency.js';
import type { LoadResult } from '../load.js';
import { readAll, resetAll } from '../measure.js';
import type { ArmRuntime } from '../stack.js';
import type { ArmResult, ColdUsage } from '../types.js';
import { hostsOf } from './plans.js';
import type { Scenario, ScenarioContext } from './scenario.js';

/** How long an actor may take before the benchmark gives up on it. */
const ACTOR_DEADLINE_MS = 20_000;

interface Outcome {
  readonly actor: number;
  readonly status: number | null;
  readonly doneMs: number;
  readonly latencyMs: number;
}

async function waitForSuspended(ctx: ScenarioContext, runtime: ArmRuntime, want: number): Promise<void> {
  const stub = runtime.probes.find((p) => p.kind === 'stub');
  if (!stub) return;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const s = readStub(await stub.admin.stats());
    if ((s.actorsByStatus['SUSPENDED'] ?? 0) >= want) return;
    if (Date.now() > deadline) throw new Error(`cold: actors not suspended after 30 s: ${JSON.stringify(s.actorsByStatus)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every request of one cold run, and each actor's first 2xx (ms after the burst's start; null if none). */
interface BurstRecord {
  readonly outcomes: Outcome[];
  readonly firstSuccess: (number | null)[];
  readonly wallMs: number;
  readonly cpu: NodeJS.CpuUsage;
}

/** One GET to `actor`; times relative to `t0` (the burst's start) and to its own start. */
async function requestOnce(pool: Pool, hosts: readonly string[], actor: number, t0: number): Promise<Outcome> {
  const start = performance.now();
  try {
    const res = await pool.request({ path: '/', method: 'GET', headers: { host: hosts[actor] as string } });
    await res.body.dump();
    const end = performance.now();
    return { actor, status: res.statusCode, doneMs: end - t0, latencyMs: end - start };
  } catch {
    const end = performance.now();
    return { actor, status: null, doneMs: end - t0, latencyMs: end - start };
  }
}

/**
 * `perActor` concurrent first requests to every host at once; then actors that failed the whole burst keep being
 * asked, one request at a time, until they answer or ACTOR_DEADLINE_MS passes.
 */
async function burst(pool: Pool, hosts: readonly string[], perActor: number): Promise<BurstRecord> {
  const outcomes: Outcome[] = [];
  const firstSuccess = new Array<number | null>(hosts.length).fill(null);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const one = (actor: number): Promise<Outcome> => requestOnce(pool, hosts, actor, t0);
  const note = (o: Outcome): void => {
    outcomes.push(o);
    if (o.status !== null && o.status >= 200 && o.status < 300) {
      const prev = firstSuccess[o.actor];
      if (prev === null || prev === undefined || o.doneMs < prev) firstSuccess[o.actor] = o.doneMs;
    }
  };
  const all: Promise<void>[] = [];
  for (let a = 0; a < hosts.length; a++) for (let k = 0; k < perActor; k++) all.push(one(a).then(note));
  await Promise.all(all);
  await Promise.all(
    firstSuccess.map(async (v, a) => {
      while (firstSuccess[a] === null && performance.now() - t0 < ACTOR_DEADLINE_MS) {
        note(await one(a));
        if (firstSuccess[a] === null) await new Promise((r) => setTimeout(r, 20));
      }
      return v;
    }),
  );
  const wallMs = performance.now() - t0;
  return { outcomes, firstSuccess, wallMs, cpu: process.cpuUsage(cpu0) };
}

/** The burst as the load result every scenario reports. */
function loadResultOf(record: BurstRecord): LoadResult {
  const { outcomes, wallMs, cpu } = record;
  const statusCounts: Record<string, number> = {};
  let non2xx = 0;
  let errors = 0;
  for (const o of outcomes) {
    if (o.status === null) {
      errors++;
      continue;
    }
    statusCounts[String(o.status)] = (statusCounts[String(o.status)] ?? 0) + 1;
    if (o.status < 200 || o.status >= 300) non2xx++;
  }
  const answered = outcomes.length - errors;
  return {
    requests: answered,
    durationS: wallMs / 1000,
    rps: answered / (wallMs / 1000),
    non2xx,
    errors,
    timeouts: 0,
    statusCounts,
    latency: summarize(outcomes.filter((o) => o.status !== null).map((o) => o.latencyMs)),
    loadgenCpuMs: (cpu.user + cpu.system) / 1000,
    loadgenPeakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}

/** The cold block of the arm's result: first-success times and ResumeActor calls per actor. */
function coldResultOf(record: BurstRecord, perActor: number, stats: WindowStats): ColdUsage {
  const actors = record.firstSuccess.length;
  const firsts = record.firstSuccess.filter((v): v is number => v !== null);
  const fs = summarize(firsts);
  const stub = stats['apiserver-stub'] !== undefined ? readStub(stats['apiserver-stub']) : undefined;
  return {
    actors,
    actorsAnswered: firsts.length,
    firstSuccessP50Ms: fs.p50Ms,
    firstSuccessP99Ms: fs.p99Ms,
    firstSuccessMaxMs: fs.maxMs,
    resumeCallsPerActor: stub ? stub.resumeCalls / actors : 0,
    resumeOkPerActor: stub ? (stub.resumeByCode['OK'] ?? 0) / actors : 0,
    concurrentPerActor: perActor,
  };
}

async function coldArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult> {
  const { config, stack } = ctx;
  if (!stack) throw new Error('cold needs the bench to run the stub (it suspends every actor first)');
  await stack.suspendAll(ctx.actors);
  await waitForSuspended(ctx, runtime, ctx.actors.length);
  const hosts = hostsOf(config, ctx.actors);
  const perActor = config.connections;
  const pool = new Pool(runtime.url, { connections: hosts.length * perActor, pipelining: 1 });
  await resetAll(runtime.probes);
  const record = await burst(pool, hosts, perActor);
  await pool.close();
  const stats = await readAll(runtime.probes);
  const base = buildArmResult(runtime.spec.name, runtime.spec.description, loadResultOf(record), stats, {
    suspendedAtStart: hosts.length,
    noExtproc: !runtime.spec.extproc,
    notes: [`${hosts.length} suspended actors × ${perActor} concurrent first requests, all at once`],
  });
  return { ...base, cold: coldResultOf(record, perActor, stats) };
}

export const cold: Scenario = {
  name: 'cold',
  defaultArms: ['A', 'B1', 'B2', 'C'],
  supportedArms: ['A', 'B1', 'B2', 'C'],
  async prepare() {},
  runArm: coldArm,
};
