/**
 * egress: actors' outbound tunnels through the proxy's egress listener, with the verdict cache off (`egress-A`:
 * ext_proc, GetActor and GetActorEgressPolicy for every CONNECT, the platform's path today) and on (`egress-C`).
 * EGRESS_ACTORS running actors (the first of the run's), each with its own actor certificate and a policy allowing
 * one loopback destination (`egress-fixtures.ts`); the load (`egress-load.ts`) keeps --connections tunnels in
 * flight, one pooled HTTP/2 connection per actor as atunnel keeps, each tunnel carrying one small HTTP/1.1 request
 * and its answer. Per arm: tunnels per second, latency, the control-plane reads (the stub's counters), the cache's
 * hits and misses, and CPU per tunnel. The destination runs in the bench process (its CPU counts as the load
 * generator's, in both arms alike).
 */
import { buildArmResult } from '../arm-result.js';
import { EGRESS_SERVER_NAME } from '../egress-fixtures.js';
import { egressUsage } from '../egress-report.js';
import { runEgressLoad } from '../egress-load.js';
import { measureWindow } from '../measure.js';
import type { ArmRuntime, Stack } from '../stack.js';
import type { ArmResult } from '../types.js';
import type { Scenario, ScenarioContext } from './scenario.js';

export const EGRESS_ACTORS = 50;

function stackOf(ctx: ScenarioContext): Stack {
  if (ctx.stack === undefined) throw new Error('egress needs the bench to run the stub (not --target)');
  return ctx.stack;
}

function names(ctx: ScenarioContext): string[] {
  return ctx.actors.slice(0, EGRESS_ACTORS);
}

async function prepare(ctx: ScenarioContext): Promise<void> {
  const stack = stackOf(ctx);
  const fixtures = await stack.egressFixtures(names(ctx));
  const destination = fixtures.destination;
  const port = Number(destination.slice(destination.lastIndexOf(':') + 1));
  const policy = { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [port] }] };
  const atespace = encodeURIComponent(ctx.config.atespace);
  for (const name of names(ctx)) await stack.stubAdmin.put(`/actors/${atespace}/${encodeURIComponent(name)}/egress-policy`, policy);
  await stack.wakeAll(names(ctx));
  ctx.log(`egress: ${fixtures.actors.length} actors, each with a certificate and a policy allowing ${destination}`);
}

async function runArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult> {
  const fixtures = await stackOf(ctx).egressFixtures(names(ctx));
  const plan = {
    url: runtime.url,
    ca: fixtures.serverCa,
    servername: EGRESS_SERVER_NAME,
    actors: fixtures.actors,
    destination: fixtures.destination,
    concurrency: ctx.config.connections,
  };
  const notes = [`${fixtures.actors.length} actors, one pooled HTTP/2 connection each; ${ctx.config.connections} tunnels in flight; one request per tunnel`];
  const w = await measureWindow(runtime.probes, { urls: [runtime.url], connections: ctx.config.connections, requestsFor: () => [] }, {
    warmupS: ctx.config.warmupS,
    durationS: ctx.config.durationS,
    runLoad: (_plan, durationS) => runEgressLoad(plan, durationS),
  });
  const base = buildArmResult(runtime.spec.name, runtime.spec.description, w.load, w.stats, { notes });
  return { ...base, egress: egressUsage(w.load.requests, w.stats['apiserver-stub'], w.stats.proxy) };
}

export const egress: Scenario = {
  name: 'egress',
  defaultArms: ['egress-A', 'egress-C'],
  supportedArms: ['egress-A', 'egress-C'],
  prepare,
  runArm,
};
