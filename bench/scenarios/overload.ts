/**
 * overload: arm C with the proxy's defaults (no overload flag), a steady hit load on a few warm actors (1,000 GETs a
 * second, evenly spaced: `overload-hits.ts`), and one
 * flood after another beside it, each held for --duration seconds (10, --quick 3), each phase on a fresh proxy and
 * extproc (so a phase's memory is its own flood's, not what an earlier one left):
 *   no flood → (a) idle connections → (b) slowloris → (c) 1 MiB uploads to actors answering 3 s after the body →
 *   (d) a cold storm: one request for each of thousands of suspended actors, all at once.
 * Per phase: the proxy's peak RSS (/proc/<pid>/status every 100 ms, and VmHWM reset at the phase's start), the hit
 * throughput in the flood's window against the no-flood phase's, the proxy's shed and refused counters (null on a
 * proxy without them), what the flood's own clients saw, and whether the proxy process died or restarted. Targets:
 * peak RSS under 256 MB in every phase, hits at least 80% of the no-flood rate, no restart. The same scenario
 * measures a proxy without budgets (memory unbounded) and one with them, each with its defaults.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { buildArmResult, type WindowStats } from '../arm-result.js';
import { OVERLOAD_HOT_ACTORS, OVERLOAD_UPLOAD_ACTORS, type BenchConfig } from '../config.js';
import { runLoad } from '../load.js';
import { readAll, resetAll } from '../measure.js';
import { coldStorm, floodTarget, idleFlood, SLOWLORIS_INTERVAL_MS, slowlorisFlood, uploadFlood, type Flood, type FloodTarget } from '../overload-floods.js';
import { HitLoad, hitPlan, type HitLoadRun } from '../overload-hits.js';
import { processAlive, raiseFdLimit, readFdLimit, readOverloadCounters, readRss, RssSampler, serverPid } from '../overload-probe.js';
import { changed, counterChange, hitRatio, hitsInWindow, HIT_RATIO_TARGET, NO_FLOOD, RSS_TARGET_BYTES, shedAndRefused, sizeFloods } from '../overload-report.js';
import type { ArmRuntime, Probe, Stack } from '../stack.js';
import type { ArmResult, FdLimit, FloodKind, OverloadPhase, OverloadUsage } from '../types.js';
import { hostsOf } from './plans.js';
import type { Scenario, ScenarioContext } from './scenario.js';

export const UPLOAD_BYTES = 1024 * 1024;
export const UPLOAD_DELAY_MS = 3000;
/**
 * Hits before each flood starts: the load's connections open and warm, then this phase's own rate just before
 * its flood (`hits.beforeRps`: the same process a moment earlier, to tell the machine's noise from the flood).
 */
const SETTLE_LOAD_MS = 250;
const LEAD_MS = 1000;
const QUICK_LEAD_MS = 500;
/** After each phase, before the next: the proxy closes what the flood left. */
const SETTLE_MS = 1000;
const QUICK_SETTLE_MS = 500;
/** The most a flood may take to be in place, and a cold storm to be answered, before the bench moves on. */
const ESTABLISH_TIMEOUT_MS = 120_000;
const COLD_MAX_MS = 120_000;
/** The hit load must answer once within this time of its start, or the phase goes on without it. */
const HITS_START_TIMEOUT_MS = 20_000;
/** The hit load's own bound (each phase stops it long before). */
const HITS_MAX_S = 900;

/** One phase's proxy: a fresh proxy and extproc (arm C's, with their defaults) on the run's stub. */
interface PhaseProxy {
  readonly runtime: ArmRuntime;
  readonly url: string;
  readonly target: FloodTarget;
  readonly proxy: Probe;
  readonly pid: number;
}

interface PhasePlan {
  readonly name: string;
  readonly description: string;
  readonly kind: FloodKind | null;
  /** Runs before the phase's measurements start (the uploads' actors' bindings warmed). */
  readonly before?: (p: PhaseProxy) => Promise<void>;
  readonly start?: (p: PhaseProxy) => Flood;
  /** Seconds the flood is held (cold: at least this, and until every request is answered, at most COLD_MAX_MS). */
  readonly windowS: number;
}

interface Env {
  readonly config: BenchConfig;
  readonly hotHosts: readonly string[];
  readonly log: (message: string) => void;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return Promise.race([p, sleep(ms, 'timeout' as const)]);
}

/** The actors' roles: the hit load's warm actors, the uploads' slow actors, and the cold storm's suspended ones. */
export function actorRoles(names: readonly string[]): { hot: string[]; upload: string[]; cold: string[] } {
  const upTo = OVERLOAD_HOT_ACTORS + OVERLOAD_UPLOAD_ACTORS;
  return { hot: names.slice(0, OVERLOAD_HOT_ACTORS), upload: names.slice(OVERLOAD_HOT_ACTORS, upTo), cold: names.slice(upTo) };
}

/** One GET per actor, so the uploads' first POSTs find their bindings cached (a hit each, not a miss). */
async function warm(url: string, hosts: readonly string[]): Promise<void> {
  await Promise.all(
    hosts.map(async (host) => {
      try {
        const res = await request(`${url}/`, { headers: { host }, headersTimeout: 30_000 });
        await res.body.dump();
      } catch {
        /* a failed warm-up only makes the first upload a miss */
      }
    }),
  );
}

async function runPhase(env: Env, plan: PhasePlan, p: PhaseProxy): Promise<{ phase: OverloadPhase; hits: HitLoadRun }> {
  const { config } = env;
  const { proxy, pid } = p;
  await plan.before?.(p);
  const before = (await readOverloadCounters(proxy.admin)) ?? {};
  const sampler = new RssSampler(pid);
  await sampler.start();
  const hits = HitLoad.start({ url: p.url, hosts: env.hotHosts, connections: config.connections, seed: config.seed, rate: config.overloadHitRate, maxS: HITS_MAX_S });
  let flood: Flood | undefined;
  let stopped = false;
  try {
    if ((await withTimeout(hits.started, HITS_START_TIMEOUT_MS)) === 'timeout') env.log(`${plan.name}: the hit load had no answer ${HITS_START_TIMEOUT_MS / 1000} s after it started`);
    await sleep(SETTLE_LOAD_MS);
    const leadMs = Date.now();
    await sleep(config.quick ? QUICK_LEAD_MS : LEAD_MS);
    let fromMs: number;
    if (plan.start === undefined) {
      fromMs = Date.now();
      await sleep(plan.windowS * 1000);
    } else {
      flood = plan.start(p);
      if ((await withTimeout(flood.established, ESTABLISH_TIMEOUT_MS)) === 'timeout') env.log(`${plan.name}: the flood was not in place after ${ESTABLISH_TIMEOUT_MS / 1000} s; measuring anyway`);
      fromMs = Date.now();
      if (plan.kind === 'cold') {
        // Until every request is answered, and at least the window: a storm shed in a moment is measured as long
        // as the other floods are held.
        if ((await withTimeout(flood.finished, COLD_MAX_MS)) === 'timeout') env.log(`${plan.name}: not every request answered after ${COLD_MAX_MS / 1000} s`);
        const left = fromMs + plan.windowS * 1000 - Date.now();
        if (left > 0) await sleep(left);
      } else {
        await sleep(plan.windowS * 1000);
      }
    }
    const toMs = Date.now();
    const outcome = flood === undefined ? null : await flood.stop();
    stopped = true;
    const rss = await sampler.stop();
    const run = await hits.stop();
    await sleep(config.quick ? QUICK_SETTLE_MS : SETTLE_MS);
    const after = await readRss(pid);
    const alive = await processAlive(pid);
    const pidAfter = alive ? await serverPid(proxy.admin) : null;
    const change = counterChange(before, (await readOverloadCounters(proxy.admin)) ?? {});
    const proxyStats = await proxy.admin.stats().catch(() => undefined);
    const window = hitsInWindow(run.buckets, fromMs, toMs);
    const lead = hitsInWindow(run.buckets, leadMs, fromMs);
    const { shed, refused } = shedAndRefused(change);
    return {
      hits: run,
      phase: {
        name: plan.name,
        description: plan.description,
        flood: outcome,
        windowS: window.seconds,
        hits: {
          ok: window.ok,
          rps: window.rps,
          non2xx: window.non2xx,
          errors: window.errors,
          ratio: null,
          beforeRps: lead.rps,
          latency: { p50Ms: run.result.latency.p50Ms, p99Ms: run.result.latency.p99Ms },
        },
        rss: { ...rss, afterBytes: after?.rss ?? null },
        shed,
        refused,
        proxyCounters: changed(change),
        process: { pid, pidAfter, alive, restarted: pidAfter !== null && pidAfter !== pid },
        ...(proxyStats === undefined ? {} : { proxyStats }),
      },
    };
  } finally {
    if (!stopped) {
      await flood?.stop().catch(() => undefined);
      await sampler.stop().catch(() => undefined);
    }
    await hits.kill();
  }
}

function skippedPhase(plan: PhasePlan, pid: number | null, why: string): OverloadPhase {
  return {
    name: plan.name,
    description: plan.description,
    flood: null,
    windowS: 0,
    hits: { ok: 0, rps: 0, non2xx: 0, errors: 0, ratio: null, beforeRps: null },
    rss: { peakBytes: null, startBytes: null, endBytes: null, afterBytes: null, samples: 0, hwmReset: false },
    shed: null,
    refused: null,
    proxyCounters: {},
    process: { pid, pidAfter: null, alive: false, restarted: false },
    skipped: why,
  };
}

/** The soft open-file limit raised to the hard one where it is lower (the bench's own, or a process's by pid). */
async function raise(pid: number, what: string, log: (m: string) => void): Promise<FdLimit | null> {
  const r = await raiseFdLimit(pid);
  if (r.raised) log(`${what}: open-file limit raised to ${r.limit?.soft}`);
  else if (r.error !== undefined) log(`${what}: open-file limit ${r.limit?.soft} could not be raised (${r.error})`);
  return r.limit;
}

/** The runner's proxy for the first phase, a fresh one (with its own extproc) for each of the others. */
async function phaseProxy(ctx: ScenarioContext, first: ArmRuntime, index: number): Promise<PhaseProxy> {
  const stack = ctx.stack as Stack;
  const runtime = index === 0 ? first : await stack.startArm(first.spec, await stack.placements());
  try {
    const proxy = runtime.probes.find((p) => p.kind === 'proxy');
    if (!proxy) throw new Error('the arm has no proxy');
    const pid = await serverPid(proxy.admin);
    if (pid === null) throw new Error('the proxy\'s /server_info names no pid');
    return { runtime, url: runtime.url, target: floodTarget(runtime.url), proxy, pid };
  } catch (err) {
    if (index !== 0) await runtime.stop();
    throw err;
  }
}

/** Raises the open-file limits of a phase's proxy and extproc where they are below the hard limit; the proxy's. */
async function raisePhaseLimits(p: PhaseProxy, log: (m: string) => void): Promise<FdLimit | null> {
  const extproc = p.runtime.probes.find((x) => x.kind === 'extproc');
  const extprocPid = extproc ? await serverPid(extproc.admin) : null;
  if (extprocPid !== null) await raise(extprocPid, 'extproc', log);
  return raise(p.pid, 'proxy', log);
}

async function overloadArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult> {
  const { config } = ctx;
  const stack = ctx.stack;
  if (!stack) throw new Error('overload needs the bench to run the stub (it seeds the cold actors)');
  const roles = actorRoles(ctx.actors);
  const hotHosts = hostsOf(config, roles.hot);
  const uploadHosts = hostsOf(config, roles.upload);
  const coldHosts = hostsOf(config, roles.cold);

  // Every process holding the floods' connections needs the descriptors: the bench, the proxy, the stub's workers.
  const first = await phaseProxy(ctx, runtime, 0);
  const proxyLimit = await raisePhaseLimits(first, ctx.log);
  const stubPid = await serverPid(stack.stubAdmin);
  const stubLimit = stubPid === null ? null : await readFdLimit(stubPid);
  const benchLimit = await readFdLimit('self');
  const requested = { ...config.overload };
  const sized = sizeFloods(requested, { bench: benchLimit, proxy: proxyLimit, stub: stubLimit });
  for (const n of sized.notes) ctx.log(n);
  const sizes = { ...sized.sizes, cold: Math.min(sized.sizes.cold, coldHosts.length) };

  const env: Env = { config, hotHosts, log: ctx.log };
  const windowS = config.durationS;
  const uploadWindowS = Math.max(windowS, UPLOAD_DELAY_MS / 1000 + 2);
  const plans: PhasePlan[] = [
    { name: NO_FLOOD, description: 'the hit load alone: the reference rate', kind: null, windowS },
    {
      name: '(a) idle connections',
      description: `${sizes.idle} client connections opened and held, nothing sent`,
      kind: 'idle',
      start: (p) => idleFlood(p.target, sizes.idle),
      windowS,
    },
    {
      name: '(b) slowloris',
      description: `${sizes.slowloris} connections sending a request head that never ends, one byte per connection every ${SLOWLORIS_INTERVAL_MS} ms`,
      kind: 'slowloris',
      start: (p) => slowlorisFlood(p.target, sizes.slowloris, hotHosts[0] as string),
      windowS,
    },
    {
      name: '(c) slow uploads',
      description: `${sizes.uploads} concurrent ${UPLOAD_BYTES / 1024 / 1024} MiB POSTs to ${uploadHosts.length} actors answering ${UPLOAD_DELAY_MS / 1000} s after the body, each uploader sending again once answered`,
      kind: 'uploads',
      before: (p) => warm(p.url, uploadHosts),
      start: (p) => uploadFlood(p.url, sizes.uploads, uploadHosts, UPLOAD_BYTES, UPLOAD_DELAY_MS),
      // Long enough for the uploads to be answered at least once.
      windowS: uploadWindowS,
    },
    {
      name: '(d) cold storm',
      description: `one GET for each of ${sizes.cold} suspended actors, all written at once (every one a miss through ext_proc)`,
      kind: 'cold',
      start: (p) => coldStorm(p.target, coldHosts.slice(0, sizes.cold)),
      windowS,
    },
  ];

  const phases: OverloadPhase[] = [];
  let baseline: { hits: HitLoadRun; stats: WindowStats } | undefined;
  for (const [i, plan] of plans.entries()) {
    let p: PhaseProxy | undefined;
    try {
      p = i === 0 ? first : await phaseProxy(ctx, runtime, i);
      if (i !== 0) await raisePhaseLimits(p, ctx.log);
      ctx.log(`overload: ${plan.name}${plan.kind === null ? '' : `: ${plan.description}`} (proxy pid ${p.pid})`);
      // The warm-up is a closed loop whatever the rate: connections, JIT and the hot bindings, as fast as they come.
      if (config.warmupS > 0) await runLoad(hitPlan(p.url, hotHosts, config.connections, config.seed), config.warmupS);
      if (i === 0) await resetAll(p.runtime.probes);
      const { phase, hits } = await runPhase(env, plan, p);
      if (i === 0) baseline = { hits, stats: await readAll(p.runtime.probes) };
      const base = phases.find((x) => x.name === NO_FLOOD && x.skipped === undefined);
      const done: OverloadPhase = plan.kind === null ? phase : { ...phase, hits: { ...phase.hits, ratio: hitRatio(phase.hits.rps, base?.hits.rps) } };
      phases.push(done);
      ctx.log(
        `overload: ${plan.name}: hits ${Math.round(done.hits.rps)}/s${done.hits.ratio === null ? '' : ` (${Math.round(done.hits.ratio * 100)}% of no flood)`}, proxy peak RSS ${done.rss.peakBytes === null ? '?' : Math.round(done.rss.peakBytes / 2 ** 20)} MB, shed ${done.shed}, refused ${done.refused}${done.flood ? `, flood answers ${JSON.stringify(done.flood.statusCounts)}, errors ${JSON.stringify(done.flood.errors)}` : ''}${done.process.alive ? '' : ', the proxy process is gone'}`,
      );
    } catch (err) {
      ctx.log(`overload: ${plan.name} failed: ${(err as Error).stack ?? String(err)}`);
      phases.push(skippedPhase(plan, p?.pid ?? null, `failed: ${(err as Error).message.split('\n')[0]}`));
    } finally {
      // Every phase's processes are stopped before the next starts (the first one's again by the runner: a no-op).
      await p?.runtime.stop();
    }
  }

  const usage: OverloadUsage = {
    phases,
    requested,
    sizes,
    hotActors: roles.hot.length,
    uploadActors: roles.upload.length,
    hitRate: config.overloadHitRate,
    uploadBytes: UPLOAD_BYTES,
    uploadDelayMs: UPLOAD_DELAY_MS,
    slowlorisIntervalMs: SLOWLORIS_INTERVAL_MS,
    fdLimits: { bench: benchLimit, proxy: proxyLimit },
    rssTargetBytes: RSS_TARGET_BYTES,
    hitRatioTarget: HIT_RATIO_TARGET,
  };
  if (!baseline) throw new Error(`overload: the no-flood phase did not run (${phases[0]?.skipped ?? 'unknown'})`);
  const result = buildArmResult(runtime.spec.name, runtime.spec.description, baseline.hits.result, baseline.stats, {
    noExtproc: !runtime.spec.extproc,
    notes: [
      `the tables above are the no-flood phase's hit load (${roles.hot.length} warm actors, ${config.connections} connections, ${config.overloadHitRate > 0 ? `${config.overloadHitRate} requests a second` : 'closed loop'}, in a thread of its own); the phases are in the overload table`,
      `each phase on a fresh proxy and extproc with their defaults (no overload flag), warmed for ${config.warmupS} s; floods to 127.0.0.1 only; each held ${windowS} s (uploads ${uploadWindowS} s; the cold storm at least as long, and until answered)`,
      `open-file limits (soft/hard): bench ${benchLimit?.soft ?? '?'}/${benchLimit?.hard ?? '?'}, proxy ${proxyLimit?.soft ?? '?'}/${proxyLimit?.hard ?? '?'}, stub ${stubLimit?.soft ?? '?'}/${stubLimit?.hard ?? '?'}`,
      ...sized.notes,
    ],
  });
  return { ...result, overload: usage };
}

export const overload: Scenario = {
  name: 'overload',
  defaultArms: ['C'],
  supportedArms: ['C'],
  async prepare(ctx) {
    const stack = ctx.stack;
    if (!stack) throw new Error('overload needs the bench to run the stub (it seeds the cold actors)');
    // The proxy and extproc are started after this: they inherit the bench's raised limit.
    await raise(process.pid, 'bench', ctx.log);
    const stubPid = await serverPid(stack.stubAdmin);
    if (stubPid !== null) await raise(stubPid, 'apiserver-stub', ctx.log);
    const { hot, upload, cold } = actorRoles(ctx.actors);
    ctx.log(`overload: waking ${hot.length + upload.length} actors; ${cold.length} stay suspended for the cold storm`);
    await stack.wakeAll([...hot, ...upload]);
  },
  window: (config) => `five phases, each on a fresh proxy warmed for ${config.warmupS} s, each flood held ${config.durationS} s beside the hit load`,
  runArm: overloadArm,
};
