import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPhase, PhaseTally } from './fault-phases.js';
import { faultTargets } from './report.js';
import type { ArmResult } from './types.js';

const proxyStats = (hits: number, misses: number, connect: number, connectFailures: number, failedFast = 0, retried = 0) => ({
  cache: { enabled: true, hits, misses, entries: 10, evictions: { stale: 0, connect, reset: 0, ttl: 0, lru: 0 } },
  extproc: { streams: 0, retries: { retried } },
  upstream: { connectFailures, resets: 0, outliers: { ejections: { refused: connectFailures }, failedFast } },
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
  tally.error();
  const mark = { name: '(a) worker killed', description: 'kill', atMs: 1000, stats: { proxy: proxyStats(10, 2, 0, 0), 'apiserver-stub': stubStats(5, 0) } };
  const end = { atMs: 3500, stats: { proxy: proxyStats(30, 9, 4, 5, 3, 7), 'apiserver-stub': stubStats(9, 2) } };
  const p = buildPhase(mark, end, tally);
  assert.deepEqual(p, {
    name: '(a) worker killed',
    description: 'kill',
    durationS: 2.5,
    requests: 2,
    non2xx: 1,
    errors: 1,
    statusCounts: { 200: 1, 502: 1 },
    hits: 20,
    misses: 7,
    evictions: { connect: 4 },
    connectFailures: 5,
    failedFast: 3,
    resets: 0,
    reruns: 4,
    extprocRetries: 7,
    resumeByCode: { OK: 4, UNAVAILABLE: 2 },
  });
  assert.equal(tally.of('baseline').requests, 1);
});

test('fault targets: no client-visible error in any fault phase, enough misses in the outages, one failed connect per process', () => {
  const phase = (name: string, over: Record<string, number>) => ({
    name, description: '', durationS: 1, requests: 100, non2xx: 0, errors: 0, statusCounts: {}, hits: 90, misses: 30, evictions: {}, connectFailures: 0, failedFast: 0, resets: 0, reruns: 0, extprocRetries: 0, resumeByCode: {}, ...over,
  });
  const arm = {
    name: 'C',
    duplicates: 0,
    faults: {
      workerProcesses: 4, proxyProcesses: 1, killedWorker: '127.0.0.3', killedActors: 6, killedActorsMoved: 6, extprocDownMs: 500, outageMs: 2000, coldRequests: 90, coldPerSecond: 30,
      phases: [phase('(a) worker killed', { connectFailures: 6, non2xx: 1 }), phase('(b) extproc restart', { misses: 19 }), phase('(c) control plane down', { errors: 1 })],
    },
  } as unknown as ArmResult;
  const status = Object.fromEntries(faultTargets([arm]).map((t) => [t.name.replace(/^C: /, ''), t.status]));
  assert.deepEqual(status, {
    "(a) the killed worker's actors answer 200 from their new worker": 'met',
    '(a) failed connects per proxy process = 1': 'not-met',
    '(a) no client-visible error (worker killed)': 'not-met',
    '(b) no client-visible error (ext_proc restart)': 'met',
    '(b) at least 20 misses during the outage (ext_proc restart)': 'not-met',
    '(c) no client-visible error (control plane down)': 'not-met',
    '(c) at least 20 misses during the outage (control plane down)': 'met',
    'duplicate deliveries = 0': 'met',
  });
});
