/**
 * faults: steady POST load (unique x-request-ids, as churn) against separate worker processes while the bench
 * breaks things, one phase after another in one measured window:
 *   baseline → (a) kill -9 the worker process holding the most actors → (b) restart extproc →
 *   (c) the control plane answers UNAVAILABLE for 2 s (1 s with --quick) → recovery.
 * Each phase lasts --duration / 8 (at least 0.5 s) after its fault. Right after the kill, one request per actor
 * of the killed worker checks that it is answered 200 from the actor's new worker. Throughout (b) and (c) requests
 * for cold (suspended) actors go out at a steady rate besides the load (`cold-misses.ts`), so those phases measure
 * misses during the outage, not only hits. Reported per phase: the client's answers, cache hits and misses,
 * evictions by reason, failed connects and the requests failed fast after them, resets, re-runs, ext_proc stream
 * retries and ResumeActor answers by code. Targets are reported, never asserted; only a duplicate delivery fails the
 * run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { buildArmResult, type WindowStats } from '../arm-result.js';
import { coldActorNames, startFaultStack, isFaultRuntime, type FaultRuntime } from '../fault-stack.js';
import { startColdMisses } from '../cold-misses.js';
import { buildPhase, PhaseTally, type PhaseMark } from '../fault-phases.js';
import { runLoad } from '../load.js';
import { readAll, resetAll } from '../measure.js';
import type { ArmRuntime } from '../stack.js';
import type { ArmResult, FaultsUsage } from '../types.js';
import { postPlan } from './churn.js';
import { clientSeed, hostsOf } from './plans.js';
import { actorHost } from '../load.js';
import type { Scenario, ScenarioContext } from './scenario.js';

/** The load runs until the phases are done; this only bounds it. */
const MAX_WINDOW_S = 600;
/** Requests for cold actors per second during (b) and (c), and at most this many of them in flight. */
const COLD_PER_SECOND = 30;
const COLD_MAX_IN_FLIGHT = 200;

/** The worker hosting the most running actors, and those actors. */
function busiestWorker(placements: readonly { name: string; status: string; workerIp: string | null }[]): { ip: string; actors: string[] } {
  const by = new Map<string, string[]>();
  for (const p of placements) if (p.status === 'RUNNING' && p.workerIp) by.set(p.workerIp, [...(by.get(p.workerIp) ?? []), p.name]);
  const [ip, actors] = [...by.entries()].sort((a, b) => b[1].length - a[1].length)[0] ?? ['', []];
  if (ip === '') throw new Error('faults: no worker hosts a running actor');
  return { ip, actors };
}

/** One POST per actor through the proxy: how many are answered 200 by a worker other than `deadIp`. */
async function probeMoved(url: string, hosts: ReadonlyMap<string, string>, actors: readonly string[], deadIp: string, idPrefix: string): Promise<number> {
  const answers = await Promise.all(
    actors.map(async (name, i) => {
      try {
        const res = await request(`${url}/orders`, {
          method: 'POST',
          headers: { host: hosts.get(name) as string, 'content-type': 'application/json', 'x-request-id': `${idPrefix}-${i}` },
          body: JSON.stringify({ probe: name }),
          headersTimeout: 30_000,
        });
        const text = await res.body.text();
        if (res.statusCode !== 200) return false;
        const worker = (JSON.parse(text) as { worker?: string }).worker;
        return typeof worker === 'string' && worker !== deadIp;
      } catch {
        return false;
      }
    }),
  );
  return answers.filter(Boolean).length;
}

interface FaultScript {
  readonly marks: PhaseMark[];
  readonly end: { readonly atMs: number; readonly stats: WindowStats };
  readonly usage: Omit<FaultsUsage, 'phases'>;
}

async function runFaults(ctx: ScenarioContext, rt: FaultRuntime, tally: PhaseTally, runId: string): Promise<FaultScript> {
  const { config } = ctx;
  const dwellMs = Math.max(500, (config.durationS * 1000) / 8);
  const outageMs = config.quick ? 1000 : 2000;
  const marks: PhaseMark[] = [];
  const mark = async (name: string, description: string): Promise<void> => {
    const stats = await readAll(rt.probes);
    tally.begin(name);
    marks.push({ name, description, atMs: performance.now(), stats });
  };
  const hosts = new Map(ctx.actors.map((a, i) => [a, hostsOf(config, ctx.actors)[i] as string]));

  await mark('baseline', 'steady load, nothing broken');
  await sleep(dwellMs);

  const victim = busiestWorker(await rt.placements());
  await mark('(a) worker killed', `kill -9 of worker process ${victim.ip} (${victim.actors.length} actors)`);
  await rt.killWorker(victim.ip);
  const moved = await probeMoved(rt.url, hosts, victim.actors, victim.ip, `${runId}-probe`);
  await sleep(dwellMs);

  await mark('(b) extproc restart', 'extproc stopped and started again on the same address');
  const cold = startColdMisses({
    url: rt.url,
    stubAdmin: rt.stubAdmin,
    atespace: config.atespace,
    actors: coldActorNames(config.actors).map((name) => ({ name, host: actorHost(name, config.atespace, config.actorSuffix) })),
    perSecond: COLD_PER_SECOND,
    maxInFlight: COLD_MAX_IN_FLIGHT,
    idPrefix: `${runId}-cold`,
    onResponse: (status) => tally.response(status),
    onError: () => tally.error(),
  });
  const t0 = performance.now();
  await rt.restartExtproc();
  const extprocDownMs = performance.now() - t0;
  await sleep(dwellMs);

  await mark('(c) control plane down', `every ateapi.Control call answers UNAVAILABLE for ${outageMs} ms`);
  await rt.stubAdmin.post('/outage', { ms: outageMs });
  await sleep(outageMs);

  const coldDone = cold.stop(); // no more cold requests; the ones under way are answered in the next phase
  await mark('recovery', 'everything back');
  await sleep(dwellMs);
  await coldDone;
  const end = { atMs: performance.now(), stats: await readAll(rt.probes) };
  return {
    marks,
    end,
    usage: {
      workerProcesses: rt.workers.length,
      proxyProcesses: 1,
      killedWorker: victim.ip,
      killedActors: victim.actors.length,
      killedActorsMoved: moved,
      extprocDownMs,
      outageMs,
      coldRequests: cold.sent,
      coldPerSecond: COLD_PER_SECOND,
    },
  };
}

async function faultsArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult> {
  if (!isFaultRuntime(runtime)) throw new Error('faults: the arm was not started by the faults scenario');
  const { config } = ctx;
  const hosts = hostsOf(config, ctx.actors);
  const runId = `${Date.now().toString(36)}-${runtime.spec.name}`;
  const warm = postPlan(runtime.url, hosts, config.connections, (i) => clientSeed(config, i), `${runId}-w`);
  const plan = postPlan(runtime.url, hosts, config.connections, (i) => clientSeed(config, i + 1000), `${runId}-m`);
  if (config.warmupS > 0) await runLoad(warm, config.warmupS);
  await resetAll(runtime.probes);

  const tally = new PhaseTally();
  let script!: Promise<FaultScript>;
  let scriptDone!: (v: unknown) => void;
  const until = new Promise((resolve) => (scriptDone = resolve));
  const load = await runLoad(plan, MAX_WINDOW_S, {
    onStart: () => {
      script = runFaults(ctx, runtime, tally, runId);
      script.then(scriptDone, scriptDone);
    },
    onResponse: (status) => tally.response(status),
    onError: () => tally.error(),
    until,
  });
  const done = await script;
  const phases = done.marks.map((m, i) => buildPhase(m, done.marks[i + 1] ?? done.end, tally));
  const faults: FaultsUsage = { ...done.usage, phases };
  const result = buildArmResult(runtime.spec.name, runtime.spec.description, load, done.end.stats, {
    noExtproc: !runtime.spec.extproc,
    countDuplicates: true,
    notes: [
      `${faults.workerProcesses} worker processes; killed ${faults.killedWorker} with ${faults.killedActors} actors; extproc down ${Math.round(faults.extprocDownMs)} ms; control plane down ${faults.outageMs} ms`,
      `${faults.coldRequests} requests for cold (suspended) actors during (b) and (c), ${faults.coldPerSecond}/s, besides the load`,
      'phase counts are by the time an answer arrived; ext_proc streams are counted by the proxy (extproc restarts mid-window)',
    ],
  });
  return { ...result, faults };
}

export const faults: Scenario = {
  name: 'faults',
  defaultArms: ['C'],
  supportedArms: ['A', 'C'],
  async prepare() {},
  startArm: (ctx, spec) => startFaultStack(ctx.config, spec, ctx.actors),
  runArm: faultsArm,
};
