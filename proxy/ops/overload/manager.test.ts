/** The overload manager with an injected sampler: its level, the actions' answers and counts, its readiness. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OverloadManager } from './manager.js';
import { OverloadTallies } from './tallies.js';
import { OverloadStats } from './stats.js';
import type { Readings } from './levels.js';

function manager(): { m: OverloadManager; set(r: Partial<Readings>): void } {
  let readings: Readings = { loopDelayMs: 0, heapUsedBytes: 0 };
  const m = new OverloadManager({
    triggers: { loopDelayMs: { shedMisses: 100, shedAll: 400 }, heapUsedBytes: { shedMisses: 1000, shedAll: 2000 } },
    tallies: new OverloadTallies(),
    sampler: () => readings,
  });
  return { m, set: (r) => (readings = { ...readings, ...r }) };
}

test('normal: nothing is shed, nothing counted, ready', () => {
  const { m } = manager();
  m.sample();
  assert.equal(m.levelName, 'normal');
  assert.equal(m.shedMiss(), undefined);
  assert.equal(m.shedRequest(), undefined);
  assert.equal(m.refuseConnection(), false);
  assert.deepEqual(m.state(), { kind: 'ok' });
  assert.deepEqual(m.tallies.shed, { overloadMiss: 0, overloadAll: 0, extprocQueueTimeout: 0, extprocQueueFull: 0 });
});

test('shed-misses: misses and new connections are refused and counted, requests are served, /ready fails with the reason', () => {
  const { m, set } = manager();
  set({ heapUsedBytes: 1500 });
  m.sample();
  m.sample();
  assert.equal(m.levelName, 'shed-misses');
  assert.match(m.shedMiss() ?? '', /^overloaded: shed-misses \(heap used 0\.0 MiB >= 0\.0 MiB\)$/);
  assert.equal(m.refuseConnection(), true);
  assert.equal(m.shedRequest(), undefined, 'hits flow');
  assert.deepEqual([m.tallies.shed.overloadMiss, m.tallies.shed.overloadAll, m.tallies.connectionsRefused.overload], [1, 0, 1]);
  const state = m.state();
  assert.equal(state.kind, 'failing');
  assert.match(state.kind === 'failing' ? state.reason : '', /overloaded: shed-misses/);
  assert.deepEqual(m.tallies.transitions, { normal: 0, 'shed-misses': 1, 'shed-all': 0 });
});

test('shed-all: every request is refused too; back to normal step by step, each step counted', () => {
  const { m, set } = manager();
  set({ loopDelayMs: 450 });
  m.sample();
  m.sample();
  assert.equal(m.levelName, 'shed-all');
  assert.match(m.shedRequest() ?? '', /^overloaded: shed-all \(event-loop delay 450\.0 ms >= 400\.0 ms\)$/);
  assert.equal(m.tallies.shed.overloadAll, 1);
  set({ loopDelayMs: 0 });
  for (let i = 0; i < 4; i++) m.sample();
  assert.equal(m.levelName, 'shed-misses');
  for (let i = 0; i < 4; i++) m.sample();
  assert.equal(m.levelName, 'normal');
  assert.deepEqual(m.state(), { kind: 'ok' });
  assert.deepEqual(m.tallies.transitions, { normal: 1, 'shed-misses': 1, 'shed-all': 1 });
});

test('the /stats block: readings, thresholds, shed and refused counts since the reset, levels as they are', () => {
  const { m, set } = manager();
  const budget = { capacity: 64, inUseBytes: 10, bodies: 1, streamedWithoutReplay: 0, bufferedRefused: 0 };
  const bodyBudget = { capacity: 512, inUseBytes: 256, bodies: 1, refused: 0 };
  const stats = new OverloadStats({ manager: m, budget, bodyBudget, maxConnections: 5, extprocQueue: { maxStreams: 2, maxWaiting: 8, timeoutMs: 1000 } });
  budget.streamedWithoutReplay = 3;
  budget.bufferedRefused = 1;
  bodyBudget.refused = 2;
  set({ loopDelayMs: 150 });
  m.sample();
  m.sample();
  m.shedMiss();
  m.tallies.connectionsOpen = 4;
  m.tallies.extprocQueueWaiting = 3;
  assert.deepEqual(stats.snapshot(), {
    state: 'shed-misses',
    level: 1,
    transitions: { normal: 0, 'shed-misses': 1, 'shed-all': 0 },
    monitors: { loopDelayMs: { reading: 150, shedMisses: 100, shedAll: 400 }, heapUsedBytes: { reading: 0, shedMisses: 1000, shedAll: 2000 } },
    shed: { overloadMiss: 1, overloadAll: 0, extprocQueueTimeout: 0, extprocQueueFull: 0, replayBudget: 1, bodyBudget: 2 },
    connections: { open: 4, max: 5, refused: { limit: 0, overload: 0 } },
    replay: { budgetBytes: 64, inUseBytes: 10, bodies: 1, streamedWithoutReplay: 3 },
    bodies: { budgetBytes: 512, inUseBytes: 256, inFlight: 1 },
    extprocQueue: { maxStreams: 2, maxWaiting: 8, timeoutMs: 1000, inFlight: 0, waiting: 3, queued: 0 },
  });
  stats.reset();
  const fresh = stats.snapshot();
  assert.equal(fresh.shed.overloadMiss, 0);
  assert.equal(fresh.replay.streamedWithoutReplay, 0);
  assert.equal(fresh.shed.bodyBudget, 0);
  assert.equal(fresh.transitions['shed-misses'], 0);
  assert.deepEqual([fresh.connections.open, fresh.extprocQueue.waiting, fresh.state], [4, 3, 'shed-misses'], 'levels are not reset');
});

test('with every trigger off nothing is sampled and the state stays normal', () => {
  const m = new OverloadManager({
    triggers: { loopDelayMs: { shedMisses: 0, shedAll: 0 }, heapUsedBytes: { shedMisses: 0, shedAll: 0 } },
    tallies: new OverloadTallies(),
  }).start();
  assert.equal(m.enabled, false);
  m.sample();
  assert.equal(m.level, 0);
  m.stop();
});
