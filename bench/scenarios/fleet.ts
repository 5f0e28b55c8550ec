/**
 * fleet: --replicas proxy processes (each its own cache) behind HAProxy, one apiserver-stub and one extproc per
 * arm, a closed loop of GETs and POSTs (bench/fleet-load.ts) over every actor. Arms: `fleet-affinity` (consistent
 * hash of Host), `fleet-rr` (round robin), `fleet-sni` (TLS passthrough, consistent hash of the SNI, a share of the
 * requests coalesced onto another actor's connection and answered 421). Each arm reports the steady window's
 * ResumeActor calls per actor per TTL over the whole fleet: about 1 when each actor meets one cache, about
 * --replicas without affinity.
 *
 * The affinity arm then runs three phases under the same load:
 * - kill: SIGKILL the replica serving the most actors; after a dwell it is started again;
 * - rollout: every replica in turn gets SIGTERM (readiness fails, it serves on for its drain delay while HAProxy's
 *   checks take it out, drains, exits) and is started again once the previous one is back;
 * - scale: one more replica is started and enabled in HAProxy.
 * Per phase: GET and POST failures, errors, non-2xx, POSTs delivered twice (the stub's duplicate count), actors
 * that changed replica and ResumeActor calls (with what the steady rate predicts for the same time). On 2 cores
 * compare errors and ResumeActor calls, not throughput: HAProxy, N replicas, extproc, the stub and the client
 * share two cores.
 */
import { wiringFlags } from '../../scripts/stack/wiring.js';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { sumDocuments } from '../../proxy/cluster/sum-documents.js';
import { workerNet } from '../../lib/loopback.js';
import { Fleet } from '../../scripts/fleet/fleet.js';
import { REPLICA_HEADER, type FleetMode } from '../../scripts/fleet/haproxy-config.js';
import { Admin, readStub } from '../admin.js';
import { buildArmResult, type WindowStats } from '../arm-result.js';
import type { ArmSpec } from '../arms.js';
import type { BenchConfig } from '../config.js';
import { resumeAll } from '../control.js';
import { FleetLoad, tallyDiff, type FleetTally } from '../fleet-load.js';
import { launchComponent, LaunchGroup } from '../launcher.js';
import type { LoadResult } from '../load.js';
import { readAll, resetAll } from '../measure.js';
import { stubArgs, type ArmRuntime, type Probe } from '../stack.js';
import type { ArmResult, FleetPhase, FleetUsage } from '../types.js';
import { hostsOf } from './plans.js';
import type { Scenario, ScenarioContext } from './scenario.js';

/** Share of the requests that are POSTs (each with a unique request id). */
export const POST_SHARE = 0.25;
/** `fleet-sni`: share of the requests sent on another actor's connection. */
export const COALESCE_SHARE = 0.1;
/** Each replica's --drain-delay-ms: well above HAProxy's detection time (3 checks 250 ms apart). */
export const DRAIN_DELAY_MS = 1500;
/** The warm-up waits at most this long for every actor to be answered once. */
const WARM_ALL_ACTORS_MS = 30_000;

export interface FleetRuntime extends ArmRuntime {
  readonly kind: 'fleet';
  readonly fleet: Fleet;
  readonly mode: FleetMode;
  readonly stubAdmin: Admin;
  /** Every slot's admin (a replica that is down at the time is left out of a read). */
  readonly replicaProbes: readonly Probe[];
  readonly extprocProbe: Probe;
}

function isFleetRuntime(r: ArmRuntime): r is FleetRuntime {
  return (r as Partial<FleetRuntime>).kind === 'fleet';
}

/** The arm's processes: a stub with its workers, every actor awake, extproc, then the fleet. */
async function startFleetArm(config: BenchConfig, spec: ArmSpec, actors: readonly string[]): Promise<FleetRuntime> {
  const mode = spec.kind === 'fleet' ? spec.fleet : undefined;
  if (mode === undefined) throw new Error(`fleet: arm ${spec.name} is not a fleet arm`);
  const opts = { echo: config.echo };
  return LaunchGroup.build(async (group) => {
    const net = await workerNet();
    const stubExtra = ['--workers', String(config.workers), '--worker-ip-base', net.ipBase, '--worker-capacity', String(config.workerCapacity)];
    const stub = await group.add(launchComponent('apiserver-stub', [...stubArgs(config, net.port), ...stubExtra], { ...opts, readyTimeoutMs: 60_000 }));
    const grpc = stub.addresses['grpc'] as string;
    await resumeAll(grpc, config.atespace, actors);
    const extprocArgs = ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', ...wiringFlags('extproc', { apiserver: grpc, workerPort: net.port }), '--actor-suffix', config.actorSuffix];
    const extproc = await group.add(launchComponent('extproc', extprocArgs, opts));
    const fleet = await Fleet.start({
      mode,
      replicas: config.replicas,
      slots: config.replicas + (mode === 'affinity' ? 1 : 0),
      backends: { apiserverGrpc: grpc, extprocGrpc: extproc.addresses['grpc'] as string, workerPort: net.port },
      proxyFlags: ['--access-log', 'off', '--cache-ttl-ms', String(config.cacheTtlMs), '--cache-max-entries', String(config.cacheMaxEntries), ...spec.proxyFlags],
      drainDelayMs: DRAIN_DELAY_MS,
      hashBalanceFactor: config.hashBalanceFactor,
      atespace: config.atespace,
      actorSuffix: config.actorSuffix,
      echo: config.echo,
    });
    const stubAdmin = new Admin(stub.addresses['admin'] as string);
    const replicaProbes = fleet.slots.map((s): Probe => ({ component: s.name, kind: 'proxy', admin: new Admin(fleet.adminUrl(s)) }));
    const extprocProbe: Probe = { component: 'extproc', kind: 'extproc', admin: new Admin(extproc.addresses['admin'] as string) };
    return {
      kind: 'fleet',
      spec,
      mode,
      url: fleet.url,
      fleet,
      stubAdmin,
      replicaProbes,
      extprocProbe,
      probes: [...replicaProbes, extprocProbe, { component: 'apiserver-stub', kind: 'stub', admin: stubAdmin }],
      stop: async () => {
        await fleet.stop();
        await group.stopAll();
      },
    };
  });
}

/** ResumeActor calls per actor per cache TTL: `calls` over `durationS` seconds spread over `actors`. */
export function perActorPerTtl(calls: number, actors: number, durationS: number, cacheTtlMs: number): number | null {
  if (actors <= 0 || durationS <= 0) return null;
  return calls / actors / ((durationS * 1000) / cacheTtlMs);
}

/** The probes of the processes running now (a replica not started yet has no admin to reset). */
function runningProbes(rt: FleetRuntime): Probe[] {
  const running = new Set(rt.fleet.running().map((s) => s.name));
  return rt.probes.filter((p) => p.kind !== 'proxy' || running.has(p.component));
}

/** The fleet's /stats as one document: the replicas summed under `proxy` (the bench reads one proxy block). */
async function readFleet(rt: FleetRuntime): Promise<WindowStats> {
  const all = (await readAll(rt.probes)) as Record<string, unknown>;
  const replicas = rt.replicaProbes.map((p) => all[p.component]).filter((d) => d !== undefined);
  return { proxy: sumDocuments(replicas), extproc: all['extproc'], 'apiserver-stub': all['apiserver-stub'] };
}

function loadResult(tally: FleetTally, durationS: number, load: FleetLoad, cpuMs: number): LoadResult {
  const requests = tally.GET.ok + tally.GET.non2xx + tally.POST.ok + tally.POST.non2xx;
  return {
    requests,
    durationS,
    rps: requests / durationS,
    non2xx: tally.GET.non2xx + tally.POST.non2xx,
    errors: tally.GET.errors + tally.POST.errors,
    timeouts: 0,
    statusCounts: tally.statusCounts,
    latency: load.latency(),
    loadgenCpuMs: cpuMs,
    loadgenPeakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}

interface PhaseContext {
  readonly rt: FleetRuntime;
  readonly load: FleetLoad;
  /** ResumeActor calls per second in the steady window. */
  readonly steadyResumeRate: number;
  readonly dwellMs: number;
  log(message: string): void;
}

async function runPhase(pc: PhaseContext, name: FleetPhase['name'], description: string, action: () => Promise<void>): Promise<FleetPhase> {
  const { rt, load } = pc;
  pc.log(`${rt.spec.name}: phase ${name}: ${description}`);
  const s0 = readStub(await rt.stubAdmin.stats());
  const c0 = load.snapshot();
  load.owners.begin();
  const t0 = performance.now();
  await action();
  await sleep(pc.dwellMs);
  const durationS = (performance.now() - t0) / 1000;
  const s1 = readStub(await rt.stubAdmin.stats());
  const d = tallyDiff(load.snapshot(), c0);
  const phase: FleetPhase = {
    name,
    description,
    durationS,
    requests: d.GET.requests + d.POST.requests,
    getErrors: d.GET.errors + d.GET.non2xx,
    postErrors: d.POST.errors + d.POST.non2xx,
    errors: d.GET.errors + d.POST.errors,
    non2xx: d.GET.non2xx + d.POST.non2xx,
    duplicates: s1.duplicates - s0.duplicates,
    actorsMoved: load.owners.moved(),
    resumeCalls: s1.resumeCalls - s0.resumeCalls,
    baselineResumeCalls: Math.round(pc.steadyResumeRate * durationS),
    statusCounts: d.statusCounts,
  };
  const samples = d.errorSamples.length ? `; first failures: ${d.errorSamples.join(' | ')}` : '';
  pc.log(`${rt.spec.name}: phase ${name}: GET errors ${phase.getErrors}, POST errors ${phase.postErrors}, duplicates ${phase.duplicates}, actors moved ${phase.actorsMoved}, ResumeActor ${phase.resumeCalls} (steady rate: ${phase.baselineResumeCalls})${samples}`);
  return phase;
}

/** The replica serving the most actors right now. */
function busiest(load: FleetLoad, running: readonly string[]): string {
  const count = new Map(running.map((r) => [r, 0]));
  for (const r of load.owners.owners().values()) if (count.has(r)) count.set(r, (count.get(r) ?? 0) + 1);
  return [...count.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? (running[0] as string);
}

async function runPhases(pc: PhaseContext): Promise<FleetPhase[]> {
  const { fleet } = pc.rt;
  const victim = busiest(pc.load, fleet.running().map((s) => s.name));
  const kill = await runPhase(pc, 'kill', `SIGKILL of ${victim} (the replica serving the most actors) under load; started again after ${pc.dwellMs} ms`, async () => {
    await fleet.kill(victim);
    await sleep(pc.dwellMs);
    await fleet.restart(victim);
  });
  const rollout = await runPhase(pc, 'rollout', `SIGTERM to each of the ${fleet.running().length} replicas in turn (drain delay ${DRAIN_DELAY_MS} ms), each started again before the next`, () =>
    fleet.rollingRestart((name) => pc.log(`${pc.rt.spec.name}: rollout: ${name}`)),
  );
  const scale = await runPhase(pc, 'scale', `one replica added under load (${fleet.running().length} → ${fleet.running().length + 1})`, async () => {
    await fleet.scaleUp();
  });
  return [kill, rollout, scale];
}

function actorsByReplica(load: FleetLoad): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of load.owners.owners().values()) out[r] = (out[r] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

async function fleetArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult> {
  if (!isFleetRuntime(runtime)) throw new Error('fleet: the arm was not started by the fleet scenario');
  const { config } = ctx;
  const rt = runtime;
  const ca = rt.mode === 'sni' && rt.fleet.caFile !== undefined ? await readFile(rt.fleet.caFile) : undefined;
  const load = new FleetLoad({
    url: rt.url,
    actors: ctx.actors,
    hosts: hostsOf(config, ctx.actors),
    connections: config.connections,
    postShare: POST_SHARE,
    seed: config.seed,
    idPrefix: `${Date.now().toString(36)}-${rt.spec.name}`,
    replicaHeader: REPLICA_HEADER,
    ...(ca === undefined ? {} : { sni: { ca, coalesceShare: COALESCE_SHARE } }),
  });
  load.start();
  try {
    // The warm-up runs until every actor has been answered (each replica has learned its actors: processes that
    // just started can take a few seconds to get there on a loaded machine), then for --warmup seconds more.
    const deadline = performance.now() + WARM_ALL_ACTORS_MS;
    while (load.answeredActors() < ctx.actors.length && performance.now() < deadline) await sleep(50);
    if (load.answeredActors() < ctx.actors.length) ctx.log(`${rt.spec.name}: only ${load.answeredActors()} of ${ctx.actors.length} actors answered during the warm-up`);
    await sleep(config.warmupS * 1000);
    await resetAll(runningProbes(rt));
    load.resetLatency();
    const before = load.snapshot();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await sleep(config.durationS * 1000);
    const stats = await readFleet(rt);
    const durationS = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const window = tallyDiff(load.snapshot(), before);
    const result = buildArmResult(rt.spec.name, rt.spec.description, loadResult(window, durationS, load, (cpu.user + cpu.system) / 1000), stats, {
      countDuplicates: true,
      notes: [
        `${config.replicas} replicas behind HAProxy (${rt.mode}); ${Math.round(POST_SHARE * 100)}% POSTs; proxy CPU and RSS summed over the replicas`,
        ...(rt.mode === 'sni' ? [`${window.coalesced} requests sent on another actor's connection, ${window.misdirected} answered 421 and sent again on their own`] : []),
        ...(window.errorSamples.length ? [`first failures: ${window.errorSamples.join(' | ')}`] : []),
      ],
    });
    const resumeCalls = result.resumeCalls ?? 0;
    const fleetUsage: FleetUsage = { mode: rt.mode, replicas: config.replicas, actorsByReplica: actorsByReplica(load), coalesced: window.coalesced, misdirected: window.misdirected };
    const phases =
      rt.mode === 'affinity'
        ? await runPhases({ rt, load, steadyResumeRate: resumeCalls / durationS, dwellMs: Math.max(config.quick ? 2000 : 5000, 2 * config.cacheTtlMs), log: ctx.log })
        : undefined;
    return {
      ...result,
      resumeCallsPerActorPerTtl: result.resumeCalls === null ? null : perActorPerTtl(resumeCalls, ctx.actors.length, durationS, config.cacheTtlMs),
      fleet: fleetUsage,
      ...(phases === undefined ? {} : { phases }),
    };
  } finally {
    await load.stop();
  }
}

export const fleet: Scenario = {
  name: 'fleet',
  defaultArms: ['fleet-affinity', 'fleet-rr', 'fleet-sni'],
  supportedArms: ['fleet-affinity', 'fleet-rr', 'fleet-sni'],
  async prepare() {},
  startArm: (ctx, spec) => startFleetArm(ctx.config, spec, ctx.actors),
  runArm: fleetArm,
};
