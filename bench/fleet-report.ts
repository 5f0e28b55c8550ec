/**
 * The fleet scenario's part of the report: its targets (judged from counts of one run, never from timing) and
 * its tables (per arm: how the actors spread over the replicas and what that cost in ResumeActor calls; per
 * phase of the affinity arm: failures, duplicates, moves and calls).
 */
import { fmt, fmtInt, statusText, table } from './markdown.js';
import type { ArmResult, TargetResult } from './types.js';

/** The most ResumeActor calls per actor per TTL a fleet with affinity may make (1: each actor meets one cache). */
export const AFFINITY_BOUND = 1.2;

function find(arms: readonly ArmResult[], name: string): ArmResult | undefined {
  return arms.find((a) => a.name === name);
}

function affinityTarget(arm: ArmResult | undefined, name: string): TargetResult | undefined {
  if (arm === undefined) return undefined;
  const v = arm.resumeCallsPerActorPerTtl;
  return v === null || v === undefined
    ? { name: `${name}: ResumeActor <= ${AFFINITY_BOUND} per actor per TTL`, status: 'n/a', detail: 'no control-plane stats' }
    : {
        name: `${name}: ResumeActor <= ${AFFINITY_BOUND} per actor per TTL`,
        status: v <= AFFINITY_BOUND ? 'met' : 'not-met',
        detail: `${fmt(v, 2)} (${fmtInt(arm.resumeCalls)} calls in ${fmt(arm.durationS, 1)} s over ${arm.fleet?.replicas ?? '?'} replicas)`,
        correctness: true,
      };
}

export function fleetTargets(arms: readonly ArmResult[]): TargetResult[] {
  const out: TargetResult[] = [];
  const affinity = find(arms, 'fleet-affinity');
  const rr = find(arms, 'fleet-rr');
  const sni = find(arms, 'fleet-sni');
  for (const t of [affinityTarget(affinity, 'fleet-affinity'), affinityTarget(sni, 'fleet-sni')]) if (t) out.push(t);
  if (rr !== undefined) {
    const replicas = rr.fleet?.replicas ?? 1;
    const a = affinity?.resumeCallsPerActorPerTtl ?? null;
    const r = rr.resumeCallsPerActorPerTtl ?? null;
    // Without affinity every replica keeps its own copy of every hot actor: about `replicas` times the calls.
    const wanted = (replicas + 1) / 2;
    out.push(
      a === null || r === null || !(a > 0)
        ? { name: 'fleet-rr: ResumeActor multiplied by the replicas', status: 'n/a', detail: 'needs arms fleet-rr and fleet-affinity with control-plane stats' }
        : {
            name: `fleet-rr: ResumeActor >= ${fmt(wanted, 1)}x fleet-affinity's (${replicas} replicas, no affinity)`,
            status: r / a >= wanted ? 'met' : 'not-met',
            detail: `${fmt(r, 2)} vs ${fmt(a, 2)} per actor per TTL = ${fmt(r / a, 2)}x`,
            correctness: true,
          },
    );
  }
  if (sni?.fleet !== undefined) {
    const f = sni.fleet;
    out.push({
      name: 'fleet-sni: every coalesced request answered 421, then served on its own connection',
      status: f.coalesced > 0 && f.misdirected === f.coalesced && sni.non2xx + sni.errors === 0 ? 'met' : 'not-met',
      detail: `${fmtInt(f.misdirected)} of ${fmtInt(f.coalesced)} coalesced requests answered 421; ${sni.non2xx} non-2xx, ${sni.errors} errors after the client's retries`,
      correctness: true,
    });
  }
  const phase = (name: string) => affinity?.phases?.find((p) => p.name === name);
  const kill = phase('kill');
  if (kill !== undefined) {
    out.push({ name: 'kill: no GET fails (HAProxy retries and redispatches)', status: kill.getErrors === 0 ? 'met' : 'not-met', detail: `${kill.getErrors} GET failures (${statusText(kill) || 'no answers'})`, correctness: true });
    out.push({
      name: 'kill: POST failures (a POST in flight at the killed replica is never sent again)',
      status: 'reported',
      detail: `${kill.postErrors} POST failures, ${kill.duplicates} duplicates; ${kill.actorsMoved} actors moved and back, ${kill.resumeCalls} ResumeActor (${kill.baselineResumeCalls} at the steady rate)`,
    });
  }
  const rollout = phase('rollout');
  if (rollout !== undefined) {
    out.push({
      name: 'rollout: no client error of any kind, POSTs included',
      status: rollout.errors + rollout.non2xx + rollout.getErrors + rollout.postErrors === 0 ? 'met' : 'not-met',
      detail: `${rollout.errors} errors, ${rollout.non2xx} non-2xx of ${fmtInt(rollout.requests)} requests in ${fmt(rollout.durationS, 1)} s`,
      correctness: true,
    });
    out.push({ name: 'rollout: duplicate deliveries = 0', status: rollout.duplicates === 0 ? 'met' : 'not-met', detail: `${rollout.duplicates} POSTs delivered twice`, correctness: true });
  }
  const scale = phase('scale');
  if (scale !== undefined) {
    out.push({
      name: 'scale: actors moved and their ResumeActor cost',
      status: 'reported',
      detail: `${scale.actorsMoved} actors moved to the new replica; ${scale.resumeCalls} ResumeActor in ${fmt(scale.durationS, 1)} s (${scale.baselineResumeCalls} at the steady rate: ${scale.resumeCalls - scale.baselineResumeCalls} extra)`,
    });
  }
  for (const arm of arms) {
    const dup = (arm.duplicates ?? 0) + (arm.phases ?? []).reduce((n, p) => n + p.duplicates, 0);
    out.push({ name: `${arm.name}: duplicate deliveries = 0`, status: dup === 0 ? 'met' : 'not-met', detail: `${dup} POSTs delivered twice (steady window and phases)`, correctness: true });
  }
  return out;
}

export function fleetTables(arms: readonly ArmResult[]): string {
  const perArm = table(
    ['arm', 'replicas', 'actors by replica', 'req/s', 'non-2xx', 'errors', 'ResumeActor', 'per actor per TTL', 'coalesced → 421'],
    ['l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
    arms.map((a) => [
      a.name,
      fmtInt(a.fleet?.replicas),
      Object.entries(a.fleet?.actorsByReplica ?? {}).map(([r, n]) => `${r} ${n}`).join(' · ') || '–',
      fmtInt(a.rps),
      fmtInt(a.non2xx),
      fmtInt(a.errors),
      fmtInt(a.resumeCalls),
      fmt(a.resumeCallsPerActorPerTtl, 2),
      a.fleet?.mode === 'sni' ? `${fmtInt(a.fleet.coalesced)} → ${fmtInt(a.fleet.misdirected)}` : '–',
    ]),
  );
  const phases = arms.flatMap((a) => (a.phases ?? []).map((p) => ({ arm: a.name, p })));
  if (phases.length === 0) return perArm;
  const perPhase = table(
    ['arm', 'phase', 's', 'requests', 'GET errors', 'POST errors', 'errors', 'non-2xx', 'duplicates', 'actors moved', 'ResumeActor', 'at steady rate', 'status codes'],
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    phases.map(({ arm, p }) => [
      arm,
      p.name,
      fmt(p.durationS, 1),
      fmtInt(p.requests),
      fmtInt(p.getErrors),
      fmtInt(p.postErrors),
      fmtInt(p.errors),
      fmtInt(p.non2xx),
      fmtInt(p.duplicates),
      fmtInt(p.actorsMoved),
      fmtInt(p.resumeCalls),
      fmtInt(p.baselineResumeCalls),
      statusText(p),
    ]),
  );
  return `${perArm}\n\n${perPhase}`;
}
