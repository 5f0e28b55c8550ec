/**
 * The side-by-side scenario (`--scenario side-by-side`): every arm's front process (the floor, this build's
 * proxy, with `--compare-build` another build's proxy (one per build named), with `--control` a second copy of this one's) started
 * once on one stub, then `--rounds` rounds in which all of them carry the same hit load at the same time for
 * `--duration` seconds, each with its own client connections. CPU per request is read from each process's
 * `/stats` over the round. Whatever the machine does to one of them in a round it does to all, so the ratio of
 * two arms taken inside each round is far steadier than two runs minutes apart (`side-by-side-stats.ts`); the
 * loads start in a different order every round, and the control arm's ratio to C is the method's own bias and
 * noise. What it reports is CPU per request under a shared, saturated machine, not throughput.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../lib/flags.js';
import { PROXY_V8_FLAGS } from '../lib/v8-tuning.js';
import { readProcess, type Admin } from './admin.js';
import { ARMS, type ArmSpec } from './arms.js';
import type { BenchConfig } from './config.js';
import { runLoad, type LoadPlan } from './load.js';
import { fmt, fmtInt, table } from './markdown.js';
import { fileStem } from './report.js';
import { hostsOf, uniformPlan } from './scenarios/plans.js';
import { perArm, ratio, startOrder, type RatioSummary, type Round, type Spread } from './side-by-side-stats.js';
import { Stack, type ArmRuntime } from './stack.js';
import type { ArmName, MachineInfo } from './types.js';

/** The arms a side-by-side run can hold: the floor and plain HTTP/1.1 proxy arms, all loaded the same way. */
export const SIDE_BY_SIDE_ARMS: readonly ArmName[] = ['floor', 'floor-ingress', 'A', 'B1', 'B2', 'C'];
const DEFAULT_ARMS: readonly ArmName[] = ['floor', 'C'];
export const CONTROL_ARM = 'C copy';

export interface SideBySideReport {
  readonly scenario: 'side-by-side';
  readonly startedAt: string;
  readonly machine: MachineInfo;
  readonly settings: Readonly<Record<string, unknown>>;
  /** Arm names in column order: the first is every ratio's base. */
  readonly arms: readonly string[];
  /** Each round's CPU per request (µs) by arm. */
  readonly rounds: readonly Round[];
  /** Each round's requests answered by arm. */
  readonly requests: readonly Readonly<Record<string, number>>[];
  /** Each round's load duration by arm in seconds, as the load generator measured it (a busy machine overruns). */
  readonly seconds: readonly Readonly<Record<string, number>>[];
  readonly perArm: Readonly<Record<string, Spread>>;
  readonly ratios: readonly RatioSummary[];
  readonly failures: readonly string[];
}

interface Entry {
  readonly name: string;
  readonly runtime: ArmRuntime;
  readonly plan: LoadPlan;
  /** The front process: the proxy's or the floor's admin. */
  readonly admin: Admin;
}

/** The arms to start, by name, with the build each proxy comes from. */
export function sideBySideArms(config: BenchConfig): { name: string; spec: ArmSpec; build?: string }[] {
  const asked = config.arms.length > 0 ? config.arms : DEFAULT_ARMS;
  const wrong = asked.filter((a) => !SIDE_BY_SIDE_ARMS.includes(a));
  if (wrong.length > 0) throw new UsageError(`--scenario side-by-side: arms ${wrong.join(', ')} cannot run side by side (of ${SIDE_BY_SIDE_ARMS.join(', ')})`);
  const out: { name: string; spec: ArmSpec; build?: string }[] = asked.map((a) => ({ name: a, spec: ARMS[a as keyof typeof ARMS] }));
  for (const build of config.compareBuilds) {
    const name = `C@${path.basename(build)}`;
    if (out.some((o) => o.name === name)) throw new UsageError(`--compare-build: two builds would both run as arm ${name} (give folders of different names)`);
    out.push({ name, spec: ARMS.C, build });
  }
  if (config.control) out.push({ name: CONTROL_ARM, spec: ARMS.C });
  if (out.length < 2) throw new UsageError('--scenario side-by-side: give at least two arms (or --compare-build, or --control)');
  return out;
}

/** The most warm-up windows a run waits for every arm to answer in one before its rounds start anyway. */
export const MAX_WARMUP_WINDOWS = 5;

/**
 * Warm-up: windows of load on every arm at once, repeated (at most `MAX_WARMUP_WINDOWS`) until every arm answered
 * in the same window, so no round measures a process that is not serving yet (a freshly started proxy on a
 * saturated machine can take more than one window to answer at all). Returns the windows it took.
 */
export async function warmUp<E extends { readonly name: string }>(entries: readonly E[], load: (entry: E) => Promise<{ readonly requests: number }>, log: (m: string) => void): Promise<number> {
  for (let window = 1; ; window++) {
    const loads = await Promise.all(entries.map(load));
    const silent = entries.filter((_, i) => (loads[i]?.requests ?? 0) === 0).map((e) => e.name);
    if (silent.length === 0 || window === MAX_WARMUP_WINDOWS) return window;
    log(`warm-up window ${window}: ${silent.join(', ')} answered nothing yet; warming up again`);
  }
}

/** The ratios worth reading: every arm to the first, C to floor-ingress, and the other build and the control to C. */
export function ratiosOf(rounds: readonly Round[], arms: readonly string[]): RatioSummary[] {
  const base = arms[0] as string;
  const out = arms.slice(1).map((a) => ratio(rounds, a, base));
  if (base !== 'floor-ingress' && arms.includes('floor-ingress') && arms.includes('C')) out.push(ratio(rounds, 'C', 'floor-ingress'));
  if (base !== 'C' && arms.includes('C')) for (const a of arms) if (a !== 'C' && (a.startsWith('C@') || a === CONTROL_ARM)) out.push(ratio(rounds, a, 'C'));
  return out;
}

export async function runSideBySide(config: BenchConfig, machine: MachineInfo, log: (m: string) => void): Promise<SideBySideReport> {
  const wanted = sideBySideArms(config);
  const startedAt = new Date().toISOString();
  log(`side-by-side: ${wanted.map((w) => w.name).join(', ')}; ${config.rounds} rounds of ${config.durationS} s after ${config.warmupS} s, all loaded at once`);
  const stack = await Stack.start(config);
  const entries: Entry[] = [];
  const failures: string[] = [];
  const rounds: Round[] = [];
  const requests: Record<string, number>[] = [];
  const seconds: Record<string, number>[] = [];
  try {
    const actors = (await stack.placements()).map((p) => p.name);
    await stack.wakeAll(actors);
    const placements = await stack.placements();
    const hosts = hostsOf(config, actors);
    for (const w of wanted) {
      const build = w.build === undefined ? undefined : { cliScript: path.join(w.build, 'dist', 'cli', 'main.js'), nodeArgs: PROXY_V8_FLAGS };
      const runtime = await stack.startArm(w.spec, placements, build);
      const plan = uniformPlan(config, runtime.url, hosts);
      entries.push({ name: w.name, runtime, plan: config.rate > 0 ? { ...plan, overallRate: config.rate } : plan, admin: (runtime.probes[0] as { admin: Admin }).admin });
    }
    if (config.warmupS > 0) await warmUp(entries, (e) => runLoad(e.plan, config.warmupS), log);
    for (let k = 0; k < config.rounds; k++) {
      const order = startOrder(entries, k);
      await Promise.all(order.map((e) => e.admin.reset()));
      const loads = await Promise.all(order.map((e) => runLoad(e.plan, config.durationS)));
      const stats = await Promise.all(order.map((e) => e.admin.stats()));
      const round: Record<string, number> = {};
      const answered: Record<string, number> = {};
      const took: Record<string, number> = {};
      order.forEach((e, i) => {
        const load = loads[i];
        const cpu = readProcess(stats[i])?.cpuUs;
        if (load === undefined || cpu === undefined) return;
        answered[e.name] = load.requests;
        took[e.name] = load.durationS;
        round[e.name] = load.requests > 0 ? cpu / load.requests : NaN;
        if (load.requests === 0 || load.non2xx + load.errors > 0) failures.push(`round ${k + 1}, arm ${e.name}: ${load.requests} answers, ${load.non2xx} non-2xx, ${load.errors} errors`);
      });
      rounds.push(round);
      requests.push(answered);
      seconds.push(took);
      log(`round ${k + 1}/${config.rounds} (${order.map((e) => e.name).join(' · ')} started in that order): ${entries.map((e) => `${e.name} ${fmt(round[e.name], 1)} µs`).join(', ')}`);
    }
  } finally {
    for (const e of entries.reverse()) await e.runtime.stop();
    await stack.stop();
  }
  const arms = wanted.map((w) => w.name);
  return {
    scenario: 'side-by-side',
    startedAt,
    machine,
    settings: {
      arms,
      rounds: config.rounds,
      durationS: config.durationS,
      warmupS: config.warmupS,
      actors: config.actors,
      connectionsPerArm: config.connections,
      ratePerArm: config.rate > 0 ? config.rate : 'closed loop',
      cacheTtlMs: config.cacheTtlMs,
      ...(config.compareBuilds.length === 0 ? {} : { compareBuild: config.compareBuilds.map((b) => path.basename(b)).join(','), compareNodeArgs: PROXY_V8_FLAGS }),
    },
    arms,
    rounds,
    requests,
    seconds,
    perArm: perArm(rounds, arms),
    ratios: ratiosOf(rounds, arms),
    failures,
  };
}

/** Each arm's CPU per request over the rounds, and the requests it carried in a median round. */
function perArmTable(r: SideBySideReport): string {
  const rows = r.arms.map((a) => {
    const p = r.perArm[a];
    const reqs = r.requests.map((q) => q[a] ?? 0).sort((x, y) => x - y);
    return [a, String(p?.n ?? 0), fmt(p?.median, 1), fmt(p?.mean, 1), fmt(p?.sd, 1), fmtInt(reqs[Math.floor(reqs.length / 2)] ?? 0)];
  });
  return table(['arm', 'rounds', 'median µs/req', 'mean µs/req', 'sd', 'requests per round (median)'], ['l', 'r', 'r', 'r', 'r', 'r'], rows);
}

/** Each in-round ratio with its spread: the mean ± two standard errors is the interval the method reads. */
function ratiosTable(r: SideBySideReport): string {
  const rows = r.ratios.map((q) => [`${q.arm} ÷ ${q.base}`, String(q.n), fmt(q.median, 3), fmt(q.mean, 3), fmt(q.se, 3), `${fmt(q.mean - 2 * q.se, 3)} – ${fmt(q.mean + 2 * q.se, 3)}`]);
  return table(['ratio', 'rounds', 'median', 'mean', 'standard error', 'mean ± 2 SE'], ['l', 'r', 'r', 'r', 'r', 'l'], rows);
}

export function renderSideBySide(r: SideBySideReport): string {
  const m = r.machine;
  const s = r.settings;
  const lines = [
    `## actor-edge bench: side-by-side (${r.startedAt})`,
    '',
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.platform}, Node ${m.node}, load average at start ${m.loadAvg.map((x) => x.toFixed(2)).join(' ')}.`,
    `Settings: ${Object.entries(s).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`).join(', ')}.`,
    '',
    'Every arm carried the same hit load at the same time in each round; CPU per request of each front process (proxy or floor) over the round.',
    '',
    perArmTable(r),
    '',
    'Ratios taken inside each round (the two arms under the same load at the same moment):',
    '',
    ratiosTable(r),
  ];
  if (r.arms.includes(CONTROL_ARM)) lines.push('', `"${CONTROL_ARM}" is a second process of this build's arm C: its ratio to C is what the method reads for two identical proxies.`);
  if (r.failures.length > 0) lines.push('', 'Failures:', '', ...r.failures.map((f) => `- ${f}`));
  return lines.join('\n');
}

export async function writeSideBySide(config: BenchConfig, r: SideBySideReport): Promise<{ markdown: string; files: string[] }> {
  const stem = fileStem(r.startedAt, r.scenario);
  await mkdir(config.outDir, { recursive: true });
  const markdown = renderSideBySide(r);
  const files = [path.join(config.outDir, `${stem}.json`), path.join(config.outDir, `${stem}.md`)];
  await writeFile(files[0] as string, JSON.stringify(r, null, 2) + '\n');
  await writeFile(files[1] as string, markdown + '\n');
  return { markdown, files };
}
