/**
 * churn: while the load runs, the stub suspends and moves random actors (--churn-rate per second, half each), so
 * cached bindings go stale under the proxy's feet. Requests are POSTs with a body and a unique x-request-id; the
 * stub records which ids each actor served, so a request delivered twice shows up as a duplicate. Reports the
 * client-visible non-2xx (target 0), the proxy's evictions and re-runs, and duplicates (must be 0).
 */
import { buildArmResult } from '../arm-result.js';
import type { LoadPlan, LoadRequest } from '../load.js';
import { measureWindow } from '../measure.js';
import { createRng, uniformSampler } from '../sampling.js';
import type { ArmRuntime } from '../stack.js';
import type { ArmResult } from '../types.js';
import { clientSeed, hostsOf } from './plans.js';
import type { Scenario, ScenarioContext } from './scenario.js';

/** POSTs to random actors, each with a body and an x-request-id unique across the whole run. */
export function postPlan(url: string, hosts: readonly string[], connections: number, seedOf: (i: number) => number, idPrefix: string): LoadPlan {
  return {
    urls: [url],
    connections,
    requestsFor: (i) => {
      const pick = uniformSampler(hosts.length, createRng(seedOf(i)));
      let n = 0;
      const setupRequest = (req: LoadRequest): LoadRequest => {
        const id = `${idPrefix}-${i}-${n++}`;
        return {
          ...req,
          method: 'POST',
          path: '/orders',
          headers: { host: hosts[pick()] as string, 'content-type': 'application/json', 'x-request-id': id },
          body: JSON.stringify({ id, item: 'widget', quantity: 1 + (n % 5) }),
        };
      };
      return [{ method: 'POST', path: '/orders', setupRequest }];
    },
  };
}

async function churnArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult> {
  const { config, stack } = ctx;
  const stubProbe = runtime.probes.find((p) => p.kind === 'stub');
  if (!stubProbe) throw new Error('churn needs the apiserver-stub admin (give --stub-admin with --target)');
  if (stack) await stack.wakeAll(ctx.actors);
  const hosts = hostsOf(config, ctx.actors);
  const runId = `${Date.now().toString(36)}-${runtime.spec.name}`;
  const warm = postPlan(runtime.url, hosts, config.connections, (i) => clientSeed(config, i), `${runId}-w`);
  const plan = postPlan(runtime.url, hosts, config.connections, (i) => clientSeed(config, i + 1000), `${runId}-m`);
  const perSec = config.churnRate / 2;
  const w = await measureWindow(runtime.probes, plan, {
    warmupS: config.warmupS,
    durationS: config.durationS,
    warmupPlan: warm,
    hooks: { onStart: async () => void (await stubProbe.admin.post('/churn', { suspendPerSec: perSec, movePerSec: perSec })) },
    after: async () => void (await stubProbe.admin.del('/churn')),
  });
  return buildArmResult(runtime.spec.name, runtime.spec.description, w.load, w.stats, {
    ...(w.suspendedAtStart !== undefined ? { suspendedAtStart: w.suspendedAtStart } : {}),
    noExtproc: !runtime.spec.extproc && runtime.spec.kind !== 'target',
    countDuplicates: true,
    notes: [`churn ${perSec}/s suspends + ${perSec}/s moves during the measured window`],
  });
}

export const churn: Scenario = {
  name: 'churn',
  defaultArms: ['A', 'B1', 'B2', 'C'],
  supportedArms: ['A', 'B1', 'B2', 'C', 'target'],
  async prepare() {},
  runArm: churnArm,
};
