/**
 * The egress scenario's view of its arms: tunnels per second, the control-plane reads each tunnel cost (GetActor
 * and GetActorEgressPolicy, from the stub's counters), the proxy's verdict cache, and the targets: `egress-C` at
 * least EGRESS_SPEEDUP_TARGET × `egress-A`'s tunnels per second, and at least EGRESS_CALLS_CUT_TARGET fewer GetActor
 * calls per tunnel. Pure: the tests feed it literal results.
 */
import { obj, num } from './admin.js';
import { fmt, fmtInt, pct, table } from './markdown.js';
import type { ArmResult, EgressUsage, TargetResult } from './types.js';

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

export function egressTargets(arms: readonly ArmResult[]): TargetResult[] {
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

export function egressTable(arms: readonly ArmResult[]): string {
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
