/**
 * steady-post: churn's load without the churn. The same POSTs (a JSON body and an x-request-id unique in the run,
 * uniformly random actors), on hot actors that stay where they are: the baseline churn's own cost is measured
 * against (same arms, same columns, duplicates counted).
 */
import { buildArmResult } from '../arm-result.js';
import { measureWindow } from '../measure.js';
import type { ArmRuntime } from '../stack.js';
import type { ArmResult } from '../types.js';
import { postPlan } from './churn.js';
import { clientSeed, hostsOf } from './plans.js';
import type { Scenario, ScenarioContext } from './scenario.js';

async function steadyPostArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult> {
  const { config } = ctx;
  const hosts = hostsOf(config, ctx.actors);
  const runId = `${Date.now().toString(36)}-${runtime.spec.name}`;
  const warm = postPlan(runtime.url, hosts, config.connections, (i) => clientSeed(config, i), `${runId}-w`);
  const plan = postPlan(runtime.url, hosts, config.connections, (i) => clientSeed(config, i + 1000), `${runId}-m`);
  const w = await measureWindow(runtime.probes, plan, { warmupS: config.warmupS, durationS: config.durationS, warmupPlan: warm });
  return buildArmResult(runtime.spec.name, runtime.spec.description, w.load, w.stats, {
    ...(w.warmupResumeCalls !== undefined ? { warmupResumeCalls: w.warmupResumeCalls } : {}),
    ...(w.suspendedAtStart !== undefined ? { suspendedAtStart: w.suspendedAtStart } : {}),
    noExtproc: !runtime.spec.extproc && runtime.spec.kind !== 'target',
    countDuplicates: true,
    notes: ['churn\'s POSTs (unique ids and bodies), no churn: the baseline of the churn scenario'],
  });
}

export const steadyPost: Scenario = {
  name: 'steady-post',
  defaultArms: ['A', 'B1', 'B2', 'C'],
  supportedArms: ['floor', 'A', 'B1', 'B2', 'C', 'target'],
  async prepare(ctx) {
    if (ctx.stack) await ctx.stack.wakeAll(ctx.actors);
  },
  runArm: steadyPostArm,
};
