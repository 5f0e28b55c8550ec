/**
 * egress: actors' outbound tunnels through the proxy's egress listener, with the verdict cache off (`egress-A`:
 * ext_proc, GetActor and GetActorEgressPolicy for every CONNECT, the platform's path today) and on (`egress-C`).
 * EGRESS_ACTORS running actors (the first of the run's), each with its own actor certificate and a policy allowing
 * one loopback destination (`egress-fixtures.ts`); the load (`egress-load.ts`) keeps --connections tunnels in
 * flight, one pooled HTTP/2 connection per actor as atunnel keeps, each tunnel carrying one small HTTP/1.1 request
 * and its answer. Per arm: tunnels per second, latency, the control-plane reads (the stub's counters), the cache's
 * hits and misses, and CPU per tunnel. The destination runs in the bench process (its CPU counts as the load
 * generator's, in both arms alike).
 *
 * After egress-C's measured window, the revocation phase (`egress-revocation.ts`): REVOCATION_ACTORS actors hold
 * REVOCATION_TUNNELS_PER_ACTOR tunnels open each, their policies are removed through the stub's admin (spread over
 * one TTL), and the time from each change to each tunnel's close is reported (`revocation`); the policies are put
 * back afterwards.
 */
import { buildArmResult } from '../arm-result.js';
import { EGRESS_SERVER_NAME } from '../egress-fixtures.js';
import { egressUsage } from '../egress-report.js';
import { runEgressLoad, type EgressActorCredential } from '../egress-load.js';
import { runRevocation } from '../egress-revocation.js';
import { num, obj } from '../admin.js';
import { measureWindow } from '../measure.js';
import type { ArmRuntime, Stack } from '../stack.js';
import type { ArmResult, EgressRevocationUsage } from '../types.js';
import type { Scenario, ScenarioContext } from './scenario.js';

export const EGRESS_ACTORS = 50;
/** The revocation phase: actors whose policies are removed, and the tunnels each holds open meanwhile (20 in all). */
export const REVOCATION_ACTORS = 4;
export const REVOCATION_TUNNELS_PER_ACTOR = 5;

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
  for (const name of names(ctx)) await stack.stubAdmin.put(policyPath(ctx, name), policyFor(destination));
  await stack.wakeAll(names(ctx));
  ctx.log(`egress: ${fixtures.actors.length} actors, each with a certificate and a policy allowing ${destination}`);
}

/** The policy every egress actor has: its one loopback destination. */
function policyFor(destination: string): unknown {
  const port = Number(destination.slice(destination.lastIndexOf(':') + 1));
  return { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [port] }] };
}

function policyPath(ctx: ScenarioContext, name: string): string {
  return `/actors/${encodeURIComponent(ctx.config.atespace)}/${encodeURIComponent(name)}/egress-policy`;
}

const nameOf = (actor: EgressActorCredential): string => actor.actor.slice(actor.actor.indexOf('/') + 1);

/** The revocation phase against this arm's proxy; the removed policies are put back afterwards. */
async function revocationPhase(ctx: ScenarioContext, runtime: ArmRuntime): Promise<EgressRevocationUsage> {
  const stack = stackOf(ctx);
  const fixtures = await stack.egressFixtures(names(ctx));
  const actors = fixtures.actors.slice(0, REVOCATION_ACTORS);
  const proxy = runtime.probes.find((p) => p.kind === 'proxy');
  const ttl = proxy === undefined ? undefined : num(obj(await proxy.admin.get('/cache/egress?limit=0').catch(() => ({})))['ttlMs']);
  const ttlMs = ttl === undefined || ttl <= 0 ? null : ttl;
  try {
    const usage = await runRevocation({
      url: runtime.url,
      ca: fixtures.serverCa,
      servername: EGRESS_SERVER_NAME,
      actors,
      destination: fixtures.destination,
      perActor: REVOCATION_TUNNELS_PER_ACTOR,
      removePolicy: async (actor) => void (await stack.stubAdmin.del(policyPath(ctx, nameOf(actor)))),
      spacingMs: (ttlMs ?? 5000) / actors.length,
      waitMs: 2 * (ttlMs ?? 5000) + 5000,
      ttlMs,
    });
    ctx.log(`egress revocation: ${usage.tunnelsClosed}/${usage.tunnelsOpen} tunnels closed after their policies were removed, lag p50 ${usage.lagMs?.p50 ?? '–'} ms, max ${usage.lagMs?.max ?? '–'} ms (TTL ${ttlMs ?? '?'} ms)`);
    return usage;
  } finally {
    for (const actor of actors) await stack.stubAdmin.put(policyPath(ctx, nameOf(actor)), policyFor(fixtures.destination));
  }
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
  const revocation = runtime.spec.name === 'egress-C' ? await revocationPhase(ctx, runtime) : undefined;
  return { ...base, egress: egressUsage(w.load.requests, w.stats['apiserver-stub'], w.stats.proxy), ...(revocation === undefined ? {} : { revocation }) };
}

export const egress: Scenario = {
  name: 'egress',
  defaultArms: ['egress-A', 'egress-C'],
  supportedArms: ['egress-A', 'egress-C'],
  prepare,
  runArm,
};
