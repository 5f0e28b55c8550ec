/**
 * heavy-filter: what a filter's CPU-heavy part costs the requests that never run it, on the event loop and on the
 * filter worker pool. Arm C's proxy with no user filter (`heavy-none`), with `filters/heavy-json.ts` run inline
 * (`heavy-inline`, `--filter-workers 0`) and offloaded (`heavy-offload`). The load (`heavy-load.ts`) is an open loop at
 * `--heavy-rate` requests a second (default 500) over a few warm actors: nine in ten are GETs, cache hits the filter
 * lets through, and every tenth a POST with a JSON body of about 1 KiB, whose offloaded part parses it and burns
 * about HEAVY_WORK_MS of one core (a fixed number of SHA-256 rounds sized once, before the first arm, on this
 * machine, and given to every arm's proxy alike). Per arm: the hits' and the heavy POSTs' rates and latencies apart,
 * and the proxy's `filterOffload` counts (`heavy-report.ts`); the target: the hits' p99 with offload at most twice
 * their p99 with no heavy filter.
 *
 * The rate leaves a two-core machine shared with other work unsaturated in the offload arm: 50 heavy POSTs a second
 * are a tenth of one core on the worker thread, and the proxy's event loop spends about 0.3 ms of CPU per request
 * there (a fifth of a core at 500 a second); at 1,000 a second, with the machine's other load, the event loop alone
 * no longer kept up and every arm measured its queue. So what the arms differ by is where the heavy part runs, not
 * whether the cores keep up: latency under a fixed arrival rate. On the event loop the heavy part blocks it 5 % of
 * the time in 2 ms slices: a twentieth of the hits wait behind one, which is the hits' p99.
 */
import { buildArmResult } from '../arm-result.js';
import { calibrateRounds, fastestMsOf, heavyWork, ROUNDS_ENV } from '../filters/heavy-json.js';
import { heavyBody, runMixedLoad } from '../heavy-load.js';
import { heavyUsage, type HeavySetup } from '../heavy-report.js';
import { readAll, resetAll } from '../measure.js';
import { HEAVY_OFFLOAD_WORKERS } from '../arms.js';
import type { ArmRuntime } from '../stack.js';
import type { ArmResult } from '../types.js';
import { hostsOf } from './plans.js';
import type { Scenario, ScenarioContext } from './scenario.js';

/** One request in HEAVY_EVERY is a heavy POST. */
export const HEAVY_EVERY = 10;
/** What each heavy call's work is sized to, in ms of one core. */
export const HEAVY_WORK_MS = 2;

const setups = new WeakMap<ScenarioContext, HeavySetup>();

/** The rounds that take about HEAVY_WORK_MS of one core here, and one call's time with them (the fastest of a few). */
export function sizeWork(): { rounds: number; workMs: number } {
  const body = new TextEncoder().encode(heavyBody('calibration'));
  const { rounds } = calibrateRounds(body, HEAVY_WORK_MS);
  return { rounds, workMs: fastestMsOf(() => heavyWork(body, rounds), 7) };
}

async function prepare(ctx: ScenarioContext): Promise<void> {
  const stack = ctx.stack;
  if (stack === undefined) throw new Error('heavy-filter needs the bench to run the stub and the proxies (not --target)');
  await stack.wakeAll(ctx.actors);
  const { rounds, workMs } = sizeWork();
  stack.extraEnv[ROUNDS_ENV] = String(rounds);
  setups.set(ctx, { offeredRate: ctx.config.heavyRate, heavyEvery: HEAVY_EVERY, rounds, workMs });
  ctx.log(`heavy-filter: each heavy call ${rounds} SHA-256 rounds (${workMs.toFixed(2)} ms here); ${ctx.config.heavyRate} requests/s, every ${HEAVY_EVERY}th a JSON POST, over ${ctx.actors.length} actors`);
}

async function runArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult> {
  const { config } = ctx;
  const setup = setups.get(ctx);
  if (setup === undefined) throw new Error('heavy-filter: the work was not sized (prepare did not run)');
  const params = { url: runtime.url, hosts: hostsOf(config, ctx.actors), connections: config.connections, seed: config.seed, rate: config.heavyRate, heavyEvery: HEAVY_EVERY };
  const runId = `${Date.now().toString(36)}-${runtime.spec.name}`;
  await resetAll(runtime.probes);
  // The warm-up at the same rate: connections, JIT, the actors' bindings, the pool's thread.
  if (config.warmupS > 0) await runMixedLoad({ ...params, durationS: config.warmupS, idPrefix: `${runId}-w` });
  await resetAll(runtime.probes);
  const load = await runMixedLoad({ ...params, durationS: config.durationS, idPrefix: `${runId}-m` });
  const stats = await readAll(runtime.probes);
  const base = buildArmResult(runtime.spec.name, runtime.spec.description, load.all, stats, {
    notes: [
      `${config.heavyRate} requests/s offered (open loop, evenly spaced) over ${config.connections} connections; every ${HEAVY_EVERY}th a JSON POST whose filter work is ${setup.rounds} SHA-256 rounds (${setup.workMs.toFixed(2)} ms when sized)${runtime.spec.name === 'heavy-offload' ? `; ${HEAVY_OFFLOAD_WORKERS} filter worker thread(s)` : ''}`,
    ],
  });
  return { ...base, heavyFilter: heavyUsage(load, stats.proxy, setup) };
}

export const heavyFilter: Scenario = {
  name: 'heavy-filter',
  defaultArms: ['heavy-none', 'heavy-inline', 'heavy-offload'],
  supportedArms: ['heavy-none', 'heavy-inline', 'heavy-offload'],
  prepare,
  window: (config) => `${config.warmupS} s warm-up, ${config.durationS} s measured at ${config.heavyRate} requests/s`,
  runArm,
};
