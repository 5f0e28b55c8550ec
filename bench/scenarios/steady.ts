/**
 * steady: hot actors (woken before the first arm), a uniformly random actor per request, closed-loop load at
 * --connections for --duration seconds after --warmup seconds. The reference comparison.
 */
import { buildArmResult } from '../arm-result.js';
import { measureWindow } from '../measure.js';
import type { LoadHooks, LoadPlan } from '../load.js';
import { runH2load } from '../h2load.js';
import { H2_ARM_NAMES } from '../h2-arms.js';
import type { ArmRuntime } from '../stack.js';
import type { ArmResult } from '../types.js';
import { directPlan, floorWorker, hostsOf, uniformPlan } from './plans.js';
import type { Scenario, ScenarioContext } from './scenario.js';

export function planFor(ctx: ScenarioContext, runtime: ArmRuntime, notes: string[]): LoadPlan {
  const { config } = ctx;
  switch (runtime.spec.kind) {
    case 'direct': {
      if (!ctx.stack) throw new Error('direct needs the bench to run the workers');
      const d = directPlan(config, ctx.stack.workerPort, ctx.placements);
      notes.push(`each connection pinned to one of ${d.workers} workers, sending to the ${d.actors} actors placed there`);
      return d.plan;
    }
    case 'floor': {
      if (runtime.spec.floor === 'table') {
        notes.push('forwards by a static Host → worker table built from the stub\'s placements (a perfect cache: same workers as C, no chain)');
        return uniformPlan(config, runtime.url, hostsOf(config, ctx.actors));
      }
      const w = floorWorker(ctx.placements);
      notes.push(`forwards to worker ${w.ip} only; load spread over its ${w.names.length} actor(s)`);
      return uniformPlan(config, runtime.url, hostsOf(config, w.names));
    }
    default:
      return uniformPlan(config, runtime.url, hostsOf(config, ctx.actors));
  }
}

export async function steadyArm(ctx: ScenarioContext, runtime: ArmRuntime, plan?: LoadPlan, notes: string[] = []): Promise<ArmResult> {
  const p = plan ?? planFor(ctx, runtime, notes);
  const transport = runtime.spec.transport;
  if (transport) notes.push(`h2load ${transport.protocol}${transport.tls ? ' with TLS' : ''}: one process per connection, each with one actor's authority; its CPU is not counted`);
  const w = await measureWindow(runtime.probes, p, {
    warmupS: ctx.config.warmupS,
    durationS: ctx.config.durationS,
    ...(transport ? { runLoad: (plan: LoadPlan, durationS: number, hooks?: LoadHooks) => runH2load({ url: runtime.url, protocol: transport.protocol }, plan, durationS, hooks) } : {}),
  });
  return buildArmResult(runtime.spec.name, runtime.spec.description, w.load, w.stats, {
    ...(w.warmupResumeCalls !== undefined ? { warmupResumeCalls: w.warmupResumeCalls } : {}),
    ...(w.suspendedAtStart !== undefined ? { suspendedAtStart: w.suspendedAtStart } : {}),
    noExtproc: !runtime.spec.extproc && runtime.spec.kind !== 'target',
    notes,
  });
}

export const steady: Scenario = {
  name: 'steady',
  defaultArms: ['direct', 'floor', 'floor-1', 'A', 'B1', 'B2', 'C'],
  supportedArms: ['direct', 'floor', 'floor-1', 'floor-ingress', 'A', 'A-mtls', 'A-extproc-mtls', 'B1', 'B2', 'C', 'C-mtls', ...H2_ARM_NAMES, 'target'],
  async prepare(ctx) {
    if (ctx.stack) await ctx.stack.wakeAll(ctx.actors);
  },
  runArm: (ctx, runtime) => steadyArm(ctx, runtime),
};
