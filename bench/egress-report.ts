/**
 * The egress scenario's view of its arms: tunnels per second, the control-plane reads each tunnel cost (GetActor
 * and GetActorEgressPolicy, from the stub's counters), the proxy's verdict cache, and the targets: `egress-C` at
 * least EGRESS_SPEEDUP_TARGET × `egress-A`'s tunnels per second, and at least EGRESS_CALLS_CUT_TARGET fewer GetActor
 * calls per tunnel. The revocation phase (egress-C): every tunnel held open is closed once its actor's policy is
 * removed (a correctness target), and the lag from the change to the close is reported against its bound, one TTL
 * plus one ext_proc round trip. Pure: the tests feed it literal results.
 */
import { obj, num } from './admin.js';
import { fmt, fmtInt, pct, table } from './markdown.js';
import type { ArmResult, EgressRevocationUsage, EgressUsage, TargetResult } from './types.js';

export const EGRESS_SPEEDUP_TARGET = 10;
export const EGRESS_CALLS_CUT_TARGET = 0.99;

function sumCodes(value: unknown): number {
  return Object.values(obj(value)).reduce<number>((n, v) => n + num(v), 0);
}

/** What one arm's window cost the control plane and how its cache answered, from the stub's and proxy's /stats. */
export function egressUsage(tunnels: number, stubStats: unknown, proxyStats: unknown): EgressUsage {
  const rpc = obj(obj(stubStats)['rpc']);
  const getActorCalls = sumCodes(rpc['GetActor']);
  const policyCalls = sumCodes(rpc['GetActorEgressPolicy']);
  const cache = obj(obj(obj(proxyStats)['egress'])['cache']);
  const per1k = (n: number): number | null => (tunnels > 0 ? (n / tunnels) * 1000 : null);
  return {
    tunnels,
    getActorCalls,
    policyCalls,
    getActorCallsPer1k: per1k(getActorCalls),
    policyCallsPer1k: per1k(policyCalls),
    cache: cache['enabled'] === true ? { hits: num(cache['hits']), misses: num(cache['misses']), joined: num(cache['joined']), entries: num(cache['entries']) } : null,
  };
}

function findArm(arms: readonly ArmResult[], name: string): ArmResult | undefined {
  return arms.find((a) => a.name === name);
}

const REVOKED_NAME = 'egress-C revocation: every tunnel open when its policy was removed is closed';
const LAG_NAME = 'egress-C revocation lag (policy removed → tunnel closed)';

/** The revocation phase's targets (none when no arm ran it). */
export function revocationTargets(arms: readonly ArmResult[]): TargetResult[] {
  const arm = arms.find((x) => x.revocation !== undefined);
  const r = arm?.revocation;
  if (arm === undefined || r === undefined) return [];
  const bound = r.ttlMs === null ? 'one TTL + one ext_proc round trip' : `≤ ${fmtInt(r.ttlMs)} ms TTL + one ext_proc round trip`;
  return [
    {
      name: REVOKED_NAME,
      status: r.tunnelsOpen > 0 && r.tunnelsClosed === r.tunnelsOpen ? 'met' : 'not-met',
      measured: `${arm.name}: ${r.tunnelsClosed} of ${r.tunnelsOpen} tunnels closed`,
      bound: 'all, at least one open',
      detail: `${r.actors} actors' policies removed while their ${r.tunnelsOpen} tunnels were open`,
      correctness: true,
    },
    r.lagMs === null
      ? { name: LAG_NAME, status: 'n/a', detail: 'no tunnel closed' }
      : {
          name: LAG_NAME,
          status: 'reported',
          measured: `lag p50 ${fmt(r.lagMs.p50, 1)} ms, p99 ${fmt(r.lagMs.p99, 1)} ms, max ${fmt(r.lagMs.max, 1)} ms`,
          bound,
          detail: `from each actor's policy change (the control plane's answer) to each of its tunnels' close at the actor`,
        },
  ];
}

export function egressTargets(arms: readonly ArmResult[]): TargetResult[] {
  return [...speedTargets(arms), ...revocationTargets(arms)];
}

function speedTargets(arms: readonly ArmResult[]): TargetResult[] {
  const a = findArm(arms, 'egress-A');
  const c = findArm(arms, 'egress-C');
  if (a === undefined || c === undefined || a.rps <= 0) {
    return [
      { name: `egress-C >= ${EGRESS_SPEEDUP_TARGET}x egress-A tunnels/s`, status: 'n/a', detail: 'needs arms egress-A and egress-C' },
      { name: `egress-C GetActor calls >= ${pct(EGRESS_CALLS_CUT_TARGET)} fewer per tunnel`, status: 'n/a', detail: 'needs arms egress-A and egress-C' },
    ];
  }
  const speedup = c.rps / a.rps;
  const aPer = a.egress?.getActorCallsPer1k ?? null;
  const cPer = c.egress?.getActorCallsPer1k ?? null;
  const cut = aPer === null || cPer === null || aPer === 0 ? null : 1 - cPer / aPer;
  return [
    {
      name: `egress-C >= ${EGRESS_SPEEDUP_TARGET}x egress-A tunnels/s`,
      status: speedup >= EGRESS_SPEEDUP_TARGET ? 'met' : 'not-met',
      measured: `egress-C ${speedup.toFixed(1)}× egress-A's tunnels per second`,
      bound: `≥ ${EGRESS_SPEEDUP_TARGET}×`,
      detail: `egress-C ${fmtInt(c.rps)} tunnels/s vs egress-A ${fmtInt(a.rps)}; CPU per tunnel (all processes) ${fmt(c.cpuMsPerRequest, 3)} vs ${fmt(a.cpuMsPerRequest, 3)} ms`,
    },
    cut === null
      ? { name: `egress-C GetActor calls >= ${pct(EGRESS_CALLS_CUT_TARGET)} fewer per tunnel`, status: 'n/a', detail: 'no GetActor count from the stub' }
      : {
          name: `egress-C GetActor calls >= ${pct(EGRESS_CALLS_CUT_TARGET)} fewer per tunnel`,
          status: cut >= EGRESS_CALLS_CUT_TARGET ? 'met' : 'not-met',
          measured: `egress-C ${pct(cut)} fewer GetActor calls per tunnel`,
          bound: `≥ ${pct(EGRESS_CALLS_CUT_TARGET)}`,
          detail: `GetActor per 1k tunnels: egress-A ${fmt(aPer, 1)}, egress-C ${fmt(cPer, 2)}`,
        },
  ];
}

/** The revocation phase as a table (empty when no arm ran it). */
export function revocationTable(arms: readonly ArmResult[]): string {
  const rows = arms.flatMap((a) => (a.revocation === undefined ? [] : [[a.name, a.revocation] as const]));
  if (rows.length === 0) return '';
  return table(
    ['arm', 'actors', 'tunnels open', 'tunnels closed', 'lag p50 / p99 / max ms', 'TTL ms'],
    ['l', 'r', 'r', 'r', 'r', 'r'],
    rows.map(([name, r]: readonly [string, EgressRevocationUsage]) => [
      name,
      fmtInt(r.actors),
      fmtInt(r.tunnelsOpen),
      fmtInt(r.tunnelsClosed),
      r.lagMs === null ? '–' : `${fmt(r.lagMs.p50, 1)} / ${fmt(r.lagMs.p99, 1)} / ${fmt(r.lagMs.max, 1)}`,
      fmtInt(r.ttlMs),
    ]),
  );
}

export function egressTable(arms: readonly ArmResult[]): string {
  const revocation = revocationTable(arms);
  return speedTable(arms) + (revocation === '' ? '' : `\n\n${revocation}`);
}

function speedTable(arms: readonly ArmResult[]): string {
  return table(
    ['arm', 'tunnels/s', 'tunnels', 'p50 / p99 ms', 'non-2xx', 'errors', 'GetActor', 'GetActorEgressPolicy', 'GetActor / 1k tunnels', 'cache hits / misses', 'CPU ms per tunnel (all processes)', 'proxy CPU ms per tunnel'],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    arms.map((a) => [
      a.name,
      fmtInt(a.rps),
      fmtInt(a.requests),
      `${fmt(a.p50Ms)} / ${fmt(a.p99Ms)}`,
      fmtInt(a.non2xx),
      fmtInt(a.errors),
      fmtInt(a.egress?.getActorCalls),
      fmtInt(a.egress?.policyCalls),
      fmt(a.egress?.getActorCallsPer1k ?? null, 2),
      a.egress?.cache ? `${fmtInt(a.egress.cache.hits)} / ${fmtInt(a.egress.cache.misses)}` : 'off',
      fmt(a.cpuMsPerRequest, 3),
      fmt(a.components.find((c) => c.component === 'proxy')?.cpuMsPerRequest ?? null, 3),
    ]),
  );
}
