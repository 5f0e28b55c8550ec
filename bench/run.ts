/**
 * `npm run bench -- [flags]`: starts one apiserver-stub (with its workers) for the whole run, then for each arm
 * its own front processes, measures, stops them, and finally prints a markdown table and writes
 * bench/results/<stamp>-<scenario>.{json,md,svg}. Exit status: 0 when every arm answered (and, under churn,
 * nothing was delivered twice); 1 otherwise; 2 for bad flags.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../lib/flags.js';
import { ARMS, TARGET_ARM, type ArmSpec } from './arms.js';
import { successes } from './arm-result.js';
import { renderChart } from './chart.js';
import { armDescription } from './legend.js';
import { buildConfig, helpText, type BenchConfig } from './config.js';
import { computeRatios, correctnessFailed, evaluateTargets, fileStem, fmt, fmtInt, renderMarkdown } from './report.js';
import { churn } from './scenarios/churn.js';
import { egress } from './scenarios/egress.js';
import { faults } from './scenarios/faults.js';
import { fleet } from './scenarios/fleet.js';
import { grpcScenario } from './scenarios/grpc.js';
import { heavyFilter } from './scenarios/heavy-filter.js';
import { cold } from './scenarios/cold.js';
import { manyActors } from './scenarios/many-actors.js';
import { overload } from './scenarios/overload.js';
import type { Scenario, ScenarioContext } from './scenarios/scenario.js';
import { steady } from './scenarios/steady.js';
import { steadyPost } from './scenarios/steady-post.js';
import { runSideBySide, writeSideBySide } from './side-by-side.js';
import { Admin, readActors } from './admin.js';
import { prepareTarget, Stack, targetProbes, type ArmRuntime } from './stack.js';
import { killAll } from './launcher.js';
import { copyProfiles, PROFILE_TOP, renderProfile, summarizeProfiles } from './profile.js';
import { ARM_NAMES, type ArmName, type ArmResult, type BenchReport, type MachineInfo, type ScenarioName } from './types.js';

/** The scenarios that run their arms one after the other (side-by-side runs them at once: `side-by-side.ts`). */
export const SCENARIO_TABLE: Readonly<Record<Exclude<ScenarioName, 'side-by-side'>, Scenario>> = Object.freeze({
  steady,
  'steady-post': steadyPost,
  churn,
  cold,
  'many-actors': manyActors,
  faults,
  fleet,
  grpc: grpcScenario,
  overload,
  egress,
  'heavy-filter': heavyFilter,
});

function log(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: (cpus[0]?.model ?? 'unknown').replace(/\s+/g, ' ').trim(),
    totalMemBytes: os.totalmem(),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAvg: os.loadavg(),
  };
}

/** Actor names `actor-000` … as the stub seeds them (used with --target when no stub admin is given). */
export function seededNames(n: number): string[] {
  const width = Math.max(3, String(Math.max(0, n - 1)).length);
  return Array.from({ length: n }, (_, i) => `actor-${String(i).padStart(width, '0')}`);
}

/** The arms this invocation runs, in the canonical order, and the ones skipped with why. */
export function selectArms(config: BenchConfig, scenario: Scenario): { run: ArmName[]; skipped: string[] } {
  if (config.target) return { run: ['target'], skipped: config.arms.filter((a) => a !== 'target').map((a) => `${a}: needs restarts, skipped with --target`) };
  const wanted = config.arms.length ? config.arms : scenario.defaultArms;
  const order: ArmName[] = [...ARM_NAMES];
  const run = order.filter((a) => wanted.includes(a) && scenario.supportedArms.includes(a));
  const skipped = wanted.filter((a) => !run.includes(a)).map((a) => `${a}: not meaningful for ${scenario.name}`);
  return { run, skipped };
}

function settingsOf(config: BenchConfig, arms: readonly ArmName[]): Record<string, unknown> {
  return {
    arms,
    actors: config.actors,
    connections: config.connections,
    warmupS: config.warmupS,
    durationS: config.durationS,
    cacheTtlMs: config.cacheTtlMs,
    cacheMaxEntries: config.cacheMaxEntries,
    ...(config.target
      ? config.stubAdmin
        ? { resolveLatencyMs: config.resolveLatencyMs, coldResumeMs: config.coldResumeMs }
        : {}
      : {
          resolveLatencyMs: config.resolveLatencyMs,
          coldResumeMs: config.coldResumeMs,
          workers: config.workers,
          workerCapacity: config.workerCapacity,
          accessLog: 'off',
          tracing: config.traceRatio === undefined ? 'off' : `on (ratio ${config.traceRatio})`,
        }),
    ...(config.scenario === 'churn' ? { churnRatePerS: config.churnRate } : {}),
    ...(config.scenario === 'many-actors' ? { zipfS: config.zipfS } : {}),
    ...(config.scenario === 'fleet' ? { replicas: config.replicas, hashBalanceFactor: config.hashBalanceFactor } : {}),
    ...(config.scenario === 'grpc' ? { grpcCalls: config.grpcCalls, grpcReplies: config.grpcReplies, grpcRounds: config.grpcRounds } : {}),
    ...(config.scenario === 'overload' ? { overloadIdle: config.overload.idle, overloadSlowloris: config.overload.slowloris, overloadUploads: config.overload.uploads, overloadCold: config.overload.cold, overloadHitRate: config.overloadHitRate } : {}),
    ...(config.scenario === 'heavy-filter' ? { heavyRate: config.heavyRate } : {}),
    ...(config.target ? { target: config.target } : { proxyWorkers: config.proxyWorkers }),
    ...(config.profile ? { profile: true } : {}),
    seed: config.seed,
  };
}

async function runArms(config: BenchConfig, scenario: Scenario, arms: readonly ArmName[], failures: string[]): Promise<ArmResult[]> {
  const results: ArmResult[] = [];
  let stack: Stack | undefined;
  try {
    let actors: string[];
    if (config.target) {
      actors = config.stubAdmin
        ? readActors(await new Admin(config.stubAdmin).get('/actors'))
            .filter((a) => a.atespace === config.atespace)
            .map((a) => a.name)
            .sort()
            .slice(0, config.actors)
        : seededNames(config.actors);
      if (config.stubAdmin) log(`target: stub latencies set to the bench's, waking ${actors.length} actors`);
      await prepareTarget(config, actors);
    } else if (scenario.startArm) {
      actors = seededNames(config.actors);
    } else {
      log(`starting apiserver-stub (${config.workers} workers × capacity ${config.workerCapacity}, ${config.actors} actors)${config.traceRatio === undefined ? '' : `; tracing on, ratio ${config.traceRatio}, to a span-counting receiver in the bench`}`);
      stack = await Stack.start(config);
      actors = (await stack.placements()).map((p) => p.name);
      if (actors.length < config.actors) throw new Error(`the stub seeded ${actors.length} actors, wanted ${config.actors}`);
    }
    const ctx: ScenarioContext = { config, ...(stack ? { stack } : {}), actors, placements: [], log };
    await scenario.prepare(ctx);
    for (const name of arms) {
      const spec: ArmSpec = name === 'target' ? TARGET_ARM : ARMS[name];
      let runtime: ArmRuntime | undefined;
      let result: ArmResult | undefined;
      const spansBefore = stack?.traced?.spans ?? 0;
      try {
        if (stack) ctx.placements = await stack.placements();
        if (name === 'target') {
          runtime = { spec, url: config.target as string, probes: targetProbes(config), stop: async () => {} };
        } else if (scenario.startArm) {
          runtime = await scenario.startArm(ctx, spec);
        } else {
          if (!stack) throw new Error(`arm ${name} needs the bench's own stack`);
          runtime = await stack.startArm(spec, ctx.placements);
        }
        log(`arm ${name}: ${spec.description} (${scenario.window?.(config) ?? `${config.warmupS} s warm-up, ${config.durationS} s measured`})`);
        const r = await scenario.runArm(ctx, runtime);
        result = r;
        log(`arm ${name}: ${fmtInt(r.rps)} req/s, p50 ${fmt(r.p50Ms)} ms, p99 ${fmt(r.p99Ms)} ms, non-2xx ${r.non2xx}, errors ${r.errors}, ResumeActor ${fmtInt(r.resumeCalls)}`);
        if (successes(r.statusCounts) === 0) failures.push(`arm ${name}: no successful answer`);
      } catch (err) {
        failures.push(`arm ${name}: ${(err as Error).message}`);
        log(`arm ${name} failed: ${(err as Error).stack ?? String(err)}`);
      } finally {
        await runtime?.stop();
        // Counted once the arm's proxy stopped (it exports the spans it still held as it stops).
        const traced = stack?.traced;
        if (traced !== undefined) log(`tracing (ratio ${config.traceRatio}): ${fmtInt(traced.spans)} spans in ${fmtInt(traced.exports)} exports so far (arm ${name} stopped)`);
        if (result !== undefined) results.push(traced === undefined ? result : { ...result, tracedSpans: traced.spans - spansBefore });
        if (runtime?.profileDir !== undefined) await writeProfile(config, name, runtime.profileDir);
      }
    }
  } finally {
    await stack?.stop();
  }
  return results;
}

/** Sums the arm's CPU profiles (every proxy process) into a top self-time table, next to the results. */
async function writeProfile(config: BenchConfig, arm: ArmName, dir: string): Promise<void> {
  try {
    const summary = await summarizeProfiles(dir, PROFILE_TOP);
    const stem = fileStem(new Date().toISOString(), `profile-${arm}`);
    await mkdir(config.outDir, { recursive: true });
    const file = path.join(config.outDir, `${stem}.md`);
    await writeFile(file, renderProfile(arm, summary) + '\n');
    await copyProfiles(dir, path.join(config.outDir, stem));
    log(`arm ${arm}: CPU profile (${summary.files} file(s)) summarised in ${path.relative(process.cwd(), file) || file}`);
  } catch (err) {
    log(`arm ${arm}: no CPU profile: ${(err as Error).message}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface Outputs {
  readonly report: BenchReport;
  readonly markdown: string;
  readonly files: readonly string[];
}

/** The arm's description for the chart's legend, when `arms.ts` knows it. */
function describedAs(name: string): { description?: string } {
  const description = armDescription(name);
  return description === undefined ? {} : { description };
}

export async function writeOutputs(config: BenchConfig, report: BenchReport): Promise<Outputs> {
  const markdown = renderMarkdown(report);
  const stem = fileStem(report.startedAt, report.scenario);
  await mkdir(config.outDir, { recursive: true });
  const svg = renderChart(report.arms.map((a) => ({ ...a, ...describedAs(a.name) })), {
    title: `actor-edge bench: ${report.scenario}`,
    subtitle: `${report.machine.cpus} CPUs (${report.machine.cpuModel}), Node ${report.machine.node}; ${config.actors} actors, ${config.connections} connections, ${config.durationS} s per arm; ${report.startedAt}`,
  });
  const files = [path.join(config.outDir, `${stem}.json`), path.join(config.outDir, `${stem}.md`), path.join(config.outDir, `${stem}.svg`)];
  await writeFile(files[0] as string, JSON.stringify(report, null, 2) + '\n');
  await writeFile(files[1] as string, markdown + `\n![chart](./${stem}.svg)\n`);
  await writeFile(files[2] as string, svg);
  if (config.chartOut) {
    await mkdir(path.dirname(path.resolve(config.chartOut)), { recursive: true });
    await writeFile(config.chartOut, svg);
    files.push(path.resolve(config.chartOut));
  }
  return { report, markdown, files };
}

export async function main(argv: string[]): Promise<number> {
  const { help, config } = buildConfig(argv);
  if (help) {
    process.stdout.write(helpText());
    return 0;
  }
  if (config.scenario === 'side-by-side') {
    const r = await runSideBySide(config, machineInfo(), log);
    const out = await writeSideBySide(config, r);
    process.stdout.write(out.markdown + '\n');
    for (const f of out.files) log(`wrote ${path.relative(process.cwd(), f) || f}`);
    for (const f of r.failures) log(`FAILED ${f}`);
    return r.failures.length > 0 ? 1 : 0;
  }
  const scenario = SCENARIO_TABLE[config.scenario];
  const { run, skipped } = selectArms(config, scenario);
  for (const s of skipped) log(`skipping ${s}`);
  if (run.length === 0) throw new UsageError('no arm to run');
  const startedAt = new Date().toISOString();
  const machine = machineInfo();
  const failures: string[] = [];
  const arms = await runArms(config, scenario, run, failures);
  const targets = evaluateTargets(config.scenario, arms, { actors: config.actors, cacheTtlMs: config.cacheTtlMs });
  const report: BenchReport = {
    scenario: config.scenario,
    startedAt,
    machine,
    settings: settingsOf(config, run),
    arms,
    ratios: computeRatios(arms),
    targets,
    ...(failures.length ? { failures } : {}),
  };
  const out = await writeOutputs(config, report);
  process.stdout.write(out.markdown + '\n');
  for (const f of out.files) log(`wrote ${path.relative(process.cwd(), f) || f}`);
  for (const f of failures) log(`FAILED ${f}`);
  if (correctnessFailed(targets)) log('FAILED: a correctness target was not met (see the targets above)');
  return failures.length || correctnessFailed(targets) ? 1 : 0;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping every process the bench started`);
    killAll();
    process.exit(130);
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n\n${helpText()}`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`bench: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
