import assert from 'node:assert/strict';
import { test } from 'node:test';
import { egressTable, egressTargets, egressUsage } from './egress-report.js';
import type { ArmResult } from './types.js';

const stub = (getActor: number, policy: number) => ({ rpc: { GetActor: { OK: getActor - 1, NOT_FOUND: 1 }, GetActorEgressPolicy: { OK: policy }, ResumeActor: { OK: 99 } } });

function arm(name: 'egress-A' | 'egress-C', rps: number, tunnels: number, getActor: number, cacheOn: boolean): ArmResult {
  const proxy = { egress: { cache: cacheOn ? { enabled: true, hits: tunnels - getActor, misses: getActor, joined: 0, entries: 50 } : { enabled: false } } };
  return {
    name, description: '', requests: tunnels, durationS: 1, rps, p50Ms: 1, p90Ms: 1, p99Ms: 2, maxMs: 3, meanMs: 1, non2xx: 0, errors: 0,
    statusCounts: { '200': tunnels }, resumeCalls: 0, extprocStreams: null, resumeCallsPer1k: null, extprocStreamsPer1k: null, cpuMsPerRequest: 0.5,
    components: [], loadgen: { component: 'loadgen', cpuMs: 0, cpuMsPerRequest: 0, peakRssBytes: 0 }, notes: [],
    egress: egressUsage(tunnels, stub(getActor, getActor), proxy),
  };
}

test('egress usage counts every code of the two control-plane reads, per 1,000 tunnels, and the cache only when it is on', () => {
  const u = egressUsage(2000, stub(10, 8), { egress: { cache: { enabled: true, hits: 1990, misses: 10, joined: 2, entries: 7 } } });
  assert.deepEqual(u, { tunnels: 2000, getActorCalls: 10, policyCalls: 8, getActorCallsPer1k: 5, policyCallsPer1k: 4, cache: { hits: 1990, misses: 10, joined: 2, entries: 7 } });
  assert.equal(egressUsage(0, {}, { egress: { cache: { enabled: false } } }).cache, null);
  assert.equal(egressUsage(0, {}, {}).getActorCallsPer1k, null);
});

test('egress targets: met at 10× the tunnels and 99% fewer GetActor calls per tunnel; not met below either; n/a without both arms', () => {
  const met = egressTargets([arm('egress-A', 100, 1000, 1000, false), arm('egress-C', 1000, 10_000, 100, true)]);
  assert.deepEqual(met.map((t) => t.status), ['met', 'met']);
  const short = egressTargets([arm('egress-A', 100, 1000, 1000, false), arm('egress-C', 999, 10_000, 101, true)]);
  assert.deepEqual(short.map((t) => t.status), ['not-met', 'not-met']);
  assert.deepEqual(egressTargets([arm('egress-C', 1000, 10_000, 100, true)]).map((t) => t.status), ['n/a', 'n/a']);
  assert.match(egressTable([arm('egress-A', 100, 1000, 1000, false)]), /\| egress-A \|.*\| off \|/);
});

test('the revocation phase: met when every tunnel held open closed (a correctness target), its lag reported against one TTL plus a round trip, and tabled', () => {
  const revocation = { actors: 4, tunnelsOpen: 20, tunnelsClosed: 20, lagMs: { p50: 2400.04, p99: 4980, max: 4990.5 }, ttlMs: 5000 };
  const c = { ...arm('egress-C', 1000, 10_000, 100, true), revocation };
  const targets = egressTargets([arm('egress-A', 100, 1000, 1000, false), c]);
  const [closed, lag] = targets.slice(2);
  assert.equal(closed?.status, 'met');
  assert.equal(closed?.correctness, true);
  assert.equal(lag?.status, 'reported');
  assert.match(lag?.measured ?? '', /p50 2400\.0 ms, p99 4980\.0 ms, max 4990\.5 ms/);
  assert.match(lag?.bound ?? '', /5,000 ms TTL \+ one ext_proc round trip/);
  const open = egressTargets([{ ...c, revocation: { ...revocation, tunnelsClosed: 19 } }]).find((t) => t.name.includes('every tunnel'));
  assert.equal(open?.status, 'not-met', 'a tunnel left open fails the run');
  const none = egressTargets([{ ...c, revocation: { ...revocation, tunnelsOpen: 0, tunnelsClosed: 0, lagMs: null } }]);
  assert.deepEqual(none.slice(2).map((t) => t.status), ['not-met', 'n/a'], 'nothing held open measures nothing');
  assert.match(egressTable([c]), /\| egress-C \| 4 \| 20 \| 20 \| 2400\.0 \/ 4980\.0 \/ 4990\.5 \| 5,000 \|/);
  assert.equal(egressTargets([arm('egress-C', 1000, 10_000, 100, true)]).length, 2, 'no phase, no revocation targets');
});
