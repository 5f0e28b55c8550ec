import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPhase, PhaseTally } from './fault-phases.js';
import { faultTargets } from './report.js';
import type { ArmResult, FaultPhase } from './types.js';

const proxyStats = (hits: number, misses: number, connect: number, connectFailures: number, failedFast = 0, retried = 0, resets = 0, resetsNotReplayable = 0) => ({
  cache: { enabled: true, hits, misses, entries: 10, evictions: { stale: 0, connect, reset: 0, ttl: 0, lru: 0 } },
  extproc: { streams: 0, retries: { retried } },
  upstream: { connectFailures, resets, resetsNotReplayable, outliers: { ejections: { refused: connectFailures }, failedFast } },
  reruns: { stale: 0, connect, reset: 0 },
});
const stubStats = (ok: number, unavailable: number) => ({ rpc: { ResumeActor: { OK: ok, UNAVAILABLE: unavailable } } });

test('answers count for the phase they arrived in; counters are the change over the phase', () => {
  const tally = new PhaseTally();
  tally.response(200); // before any phase: not counted
  tally.begin('baseline');
  tally.response(200);
  tally.begin('(a) worker killed');
  tally.response(200);
  tally.response(502);
  tally.response(502);
  tally.error();
  const mark = { name: '(a) worker killed', description: 'kill', atMs: 1000, stats: { proxy: proxyStats(10, 2, 0, 0, 0, 0, 1, 1), 'apiserver-stub': stubStats(5, 0) } };
  const end = { atMs: 3500, stats: { proxy: proxyStats(30, 9, 4, 5, 3, 7, 4, 2), 'apiserver-stub': stubStats(9, 2) } };
  const p = buildPhase(mark, end, tally);
  assert.deepEqual(p, {
    name: '(a) worker killed',
    description: 'kill',
    durationS: 2.5,
    requests: 3,
    non2xx: 2,
    non2xxNotReplayable: 1,
    errors: 1,
    statusCounts: { 200: 1, 502: 2 },
    hits: 20,
    misses: 7,
    evictions: { connect: 4 },
    connectFailures: 5,
    failedFast: 3,
    resets: 3,
    resetsNotReplayable: 1,
    reruns: 4,
    extprocRetries: 7,
    resumeByCode: { OK: 4, UNAVAILABLE: 2 },
  });
  assert.equal(tally.of('baseline').requests, 1);
});

test("a phase's not-replayable split is the proxy's count, never more than the 502s the client saw in it", () => {
  const tally = new PhaseTally();
  tally.begin('(a) worker killed');
  tally.response(502);
  tally.response(503);
  const mark = { name: '(a) worker killed', description: '', atMs: 0, stats: { proxy: proxyStats(0, 0, 0, 0), 'apiserver-stub': stubStats(0, 0) } };
  const end = { atMs: 1000, stats: { proxy: proxyStats(0, 0, 0, 1, 0, 0, 3, 3), 'apiserver-stub': stubStats(0, 0) } };
  const p = buildPhase(mark, end, tally);
  assert.deepEqual([p.non2xx, p.non2xxNotReplayable, p.resetsNotReplayable], [2, 1, 3]);
  const none = buildPhase(mark, { ...end, stats: { ...end.stats, proxy: proxyStats(0, 0, 0, 1, 0, 0, 3, 0) } }, tally);
  assert.equal(none.non2xxNotReplayable, 0, 'a proxy that counted none excuses none');
});

const phase = (name: string, over: Partial<FaultPhase>): FaultPhase => ({
  name, description: '', durationS: 1, requests: 100, non2xx: 0, non2xxNotReplayable: 0, errors: 0, statusCounts: {}, hits: 90, misses: 30, evictions: {}, connectFailures: 0, failedFast: 0, resets: 0, resetsNotReplayable: 0, reruns: 0, extprocRetries: 0, resumeByCode: {}, ...over,
});
const faultArm = (phases: FaultPhase[]): ArmResult =>
  ({
    name: 'C',
    duplicates: 0,
    faults: { workerProcesses: 4, proxyProcesses: 1, killedWorker: '127.0.0.3', killedActors: 6, killedActorsMoved: 6, extprocDownMs: 500, outageMs: 2000, coldRequests: 90, coldPerSecond: 30, phases },
  }) as unknown as ArmResult;
const statuses = (arm: ArmResult) => Object.fromEntries(faultTargets([arm]).map((t) => [t.name.replace(/^C: /, ''), t.status]));
const KILLED_NO_ERROR = '(a) no client-visible error other than resets of non-replayable requests already written (worker killed)';

test('fault targets: no client-visible error in any fault phase, enough misses in the outages, one failed connect per process', () => {
  const arm = faultArm([phase('(a) worker killed', { connectFailures: 6, non2xx: 1 }), phase('(b) extproc restart', { misses: 19 }), phase('(c) control plane down', { errors: 1 })]);
  assert.deepEqual(statuses(arm), {
    "(a) the killed worker's actors answer 200 from their new worker": 'met',
    '(a) failed connects per proxy process = 1': 'not-met',
    [KILLED_NO_ERROR]: 'not-met',
    '(b) no client-visible error (ext_proc restart)': 'met',
    '(b) at least 20 misses during the outage (ext_proc restart)': 'not-met',
    '(c) no client-visible error (control plane down)': 'not-met',
    '(c) at least 20 misses during the outage (control plane down)': 'met',
    'duplicate deliveries = 0': 'met',
  });
});

test('(a): 502s the proxy reports as resets of non-replayable requests already written are reported, not failures', () => {
  const onlyNotReplayable = faultArm([
    phase('(a) worker killed', { connectFailures: 1, non2xx: 8, non2xxNotReplayable: 8, resets: 8, resetsNotReplayable: 8, statusCounts: { 200: 92, 502: 8 } }),
    phase('(b) extproc restart', {}),
    phase('(c) control plane down', {}),
  ]);
  const [target] = faultTargets([onlyNotReplayable]).filter((t) => t.name === `C: ${KILLED_NO_ERROR}`);
  assert.equal(target?.status, 'met');
  assert.match(target?.detail ?? '', /^0 other non-2xx or errors; 8 × 502 resets of non-replayable requests already written \(reported by the proxy/);
  assert.equal(statuses(onlyNotReplayable)['(a) failed connects per proxy process = 1'], 'met');

  // One more non-2xx than the proxy counts as not replayable: a replayable request failed.
  const oneReplayable = faultArm([phase('(a) worker killed', { connectFailures: 1, non2xx: 9, non2xxNotReplayable: 8, resets: 8 })]);
  assert.equal(statuses(oneReplayable)[KILLED_NO_ERROR], 'not-met');
  // A request without any answer is never excused.
  const oneError = faultArm([phase('(a) worker killed', { connectFailures: 1, non2xx: 8, non2xxNotReplayable: 8, errors: 1 })]);
  assert.equal(statuses(oneError)[KILLED_NO_ERROR], 'not-met');
  // The proxy counted one more than the 502s the client saw in the phase (its answer arrived after the phase ended):
  // reported, and it excuses nothing else.
  const late = faultArm([phase('(a) worker killed', { connectFailures: 1, non2xx: 2, non2xxNotReplayable: 2, resetsNotReplayable: 3, statusCounts: { 200: 98, 502: 2 } })]);
  const [lateTarget] = faultTargets([late]).filter((t) => t.name === `C: ${KILLED_NO_ERROR}`);
  assert.equal(lateTarget?.status, 'met');
  assert.match(lateTarget?.detail ?? '', /2 × 502 resets.*1 more counted by the proxy than 502s the client saw in the phase/);
});

test('(b) and (c) excuse nothing: a not-replayable reset there still fails the target', () => {
  const arm = faultArm([phase('(b) extproc restart', { non2xx: 1, non2xxNotReplayable: 1 }), phase('(c) control plane down', { non2xx: 1, non2xxNotReplayable: 1 })]);
  const s = statuses(arm);
  assert.equal(s['(b) no client-visible error (ext_proc restart)'], 'not-met');
  assert.equal(s['(c) no client-visible error (control plane down)'], 'not-met');
});
