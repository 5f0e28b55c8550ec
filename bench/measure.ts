/**
 * One arm's measured window, the same for every scenario that drives steady load:
 * reset every process's stats → warm-up load → read the warm-up's ResumeActor count → reset again → measured
 * load (scenario hooks start churn here) → read every /stats. Counters and CPU therefore cover the measured
 * window only; warm-up costs (cold calls, connection set-up, JIT) are reported apart.
 */
import { readStub } from './admin.js';
import type { WindowStats } from './arm-result.js';
import { runLoad, type LoadHooks, type LoadPlan, type LoadResult } from './load.js';
import type { Probe } from './stack.js';

export async function resetAll(probes: readonly Probe[]): Promise<void> {
  await Promise.all(probes.map((p) => p.admin.reset()));
}

/** Reads every probe's /stats; a probe that does not answer is left out (its numbers become "unknown"). */
export async function readAll(probes: readonly Probe[]): Promise<WindowStats> {
  const out: Record<string, unknown> = {};
  await Promise.all(
    probes.map(async (p) => {
      try {
        out[p.component] = await p.admin.stats();
      } catch {
        /* unreachable admin: reported as unknown */
      }
    }),
  );
  return out as WindowStats;
}

export interface WindowResult {
  readonly load: LoadResult;
  readonly stats: WindowStats;
  readonly warmupResumeCalls?: number;
  readonly suspendedAtStart?: number;
}

export interface WindowOptions {
  readonly warmupS: number;
  readonly durationS: number;
  readonly hooks?: LoadHooks;
  /** Runs after the measured load and before the stats are read (churn stops here). */
  readonly after?: () => Promise<void>;
  /** Plan for the warm-up (default: the measured plan). */
  readonly warmupPlan?: LoadPlan;
  /** The load generator (default: autocannon in this process; the HTTP/2 arms: h2load). */
  readonly runLoad?: typeof runLoad;
}

export async function measureWindow(probes: readonly Probe[], plan: LoadPlan, opts: WindowOptions): Promise<WindowResult> {
  const stub = probes.find((p) => p.kind === 'stub');
  await resetAll(probes);
  const run = opts.runLoad ?? runLoad;
  if (opts.warmupS > 0) await run(opts.warmupPlan ?? plan, opts.warmupS);
  let warmupResumeCalls: number | undefined;
  let suspendedAtStart: number | undefined;
  if (stub) {
    const s = readStub(await stub.admin.stats());
    warmupResumeCalls = s.resumeCalls;
    suspendedAtStart = s.actorsByStatus['SUSPENDED'] ?? 0;
  }
  await resetAll(probes);
  let load: LoadResult;
  try {
    load = await run(plan, opts.durationS, opts.hooks ?? {});
  } finally {
    if (opts.after) await opts.after();
  }
  const stats = await readAll(probes);
  return {
    load,
    stats,
    ...(warmupResumeCalls !== undefined ? { warmupResumeCalls } : {}),
    ...(suspendedAtStart !== undefined ? { suspendedAtStart } : {}),
  };
}
