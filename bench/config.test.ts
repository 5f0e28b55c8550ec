import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../lib/flags.js';
import { buildConfig, helpText } from './config.js';

test('defaults: the reference comparison', () => {
  const { config } = buildConfig([], {});
  assert.equal(config.scenario, 'steady');
  assert.equal(config.actors, 50);
  assert.equal(config.connections, 8);
  assert.equal(config.durationS, 20);
  assert.equal(config.warmupS, 5);
  assert.equal(config.resolveLatencyMs, 1);
  assert.equal(config.cacheTtlMs, 5000);
  assert.deepEqual(config.arms, []);
  assert.ok(Object.isFrozen(config));
});

test('--quick shortens the run unless --duration/--warmup are given', () => {
  assert.equal(buildConfig(['--quick'], {}).config.durationS, 2);
  assert.equal(buildConfig(['--quick'], {}).config.warmupS, 1);
  const explicit = buildConfig(['--quick', '--duration', '0.5', '--warmup=0'], {}).config;
  assert.equal(explicit.durationS, 0.5);
  assert.equal(explicit.warmupS, 0);
  assert.equal(buildConfig(['--quick'], { BENCH_DURATION: '3' }).config.durationS, 3);
});

test('many-actors sizes the workers and the cache; --arms is case-insensitive and checked', () => {
  const m = buildConfig(['--scenario', 'many-actors'], {}).config;
  assert.equal(m.actors, 10_000);
  assert.equal(m.workerCapacity, 160);
  assert.ok(m.workers * m.workerCapacity >= m.actors);
  assert.ok(m.cacheMaxEntries < m.actors);
  assert.deepEqual(buildConfig(['--arms', 'c,a', '--arms', 'FLOOR'], {}).config.arms, ['C', 'A', 'floor']);
  assert.throws(() => buildConfig(['--arms', 'D'], {}), UsageError);
  assert.throws(() => buildConfig(['--actors', '100', '--workers', '10', '--worker-capacity', '2'], {}), UsageError);
  assert.throws(() => buildConfig(['--scenario', 'spiky'], {}), UsageError);
});

test('grpc: every actor on one worker, K concurrent calls, fewer rounds with --quick unless given', () => {
  const g = buildConfig(['--scenario', 'grpc'], {}).config;
  assert.deepEqual([g.actors, g.workers, g.workerCapacity], [2, 1, 2]);
  assert.deepEqual([g.grpcCalls, g.grpcReplies, g.grpcRounds], [10, 40, 5]);
  assert.equal(buildConfig(['--scenario', 'grpc', '--quick'], {}).config.grpcRounds, 2);
  assert.equal(buildConfig(['--scenario', 'grpc', '--quick', '--grpc-rounds', '4'], {}).config.grpcRounds, 4);
  assert.equal(buildConfig(['--scenario', 'grpc', '--actors', '3'], {}).config.workerCapacity, 3);
  assert.throws(() => buildConfig(['--scenario', 'grpc', '--grpc-replies', '201'], {}), UsageError);
});

test('help names every flag', () => {
  const help = helpText();
  for (const flag of ['--quick', '--arms', '--actors', '--connections', '--duration', '--warmup', '--target', '--scenario', '--churn-rate', '--grpc-calls', '--grpc-replies', '--grpc-rounds']) {
    assert.ok(help.includes(flag), flag);
  }
});

test('fleet: 48 actors, 3 replicas and a bound of 300 by default; --quick shortens the TTL (several TTLs in the window) unless it is given', () => {
  const d = buildConfig(['--scenario', 'fleet'], {}).config;
  assert.equal(d.actors, 48);
  assert.equal(d.replicas, 3);
  assert.equal(d.hashBalanceFactor, 300);
  assert.equal(d.cacheTtlMs, 5000);
  const q = buildConfig(['--scenario', 'fleet', '--quick', '--replicas', '4'], {}).config;
  assert.deepEqual([q.cacheTtlMs, q.durationS, q.warmupS, q.replicas], [2000, 6, 1, 4]);
  assert.equal(buildConfig(['--scenario', 'fleet', '--quick', '--cache-ttl-ms', '3000'], {}).config.cacheTtlMs, 3000);
  assert.equal(buildConfig(['--scenario', 'steady', '--quick'], {}).config.cacheTtlMs, 5000, 'only the fleet scenario shortens it');
  assert.throws(() => buildConfig(['--scenario', 'fleet', '--replicas', '0'], {}), /at least 1/);
});

test('--tracing on with --trace-ratio: the ratio the proxy and extproc sample; off by default', () => {
  assert.equal(buildConfig([], {}).config.traceRatio, undefined);
  assert.equal(buildConfig(['--tracing', 'on'], {}).config.traceRatio, 1);
  assert.equal(buildConfig(['--tracing', 'on', '--trace-ratio', '0.01'], {}).config.traceRatio, 0.01);
  assert.equal(buildConfig(['--trace-ratio', '0.5'], {}).config.traceRatio, undefined, 'a ratio alone does not turn tracing on');
  assert.throws(() => buildConfig(['--tracing', 'on', '--trace-ratio', '2'], {}), UsageError);
  for (const other of [['--target', 'http://127.0.0.1:8080'], ['--scenario', 'faults'], ['--scenario', 'fleet']]) {
    assert.throws(() => buildConfig(['--tracing', 'on', ...other], {}), /--tracing on: not with/, `refused with ${other.join(' ')}`);
  }
});

test('overload: the floods\' sizes, full and --quick, one flag each; the stub seeds the cold actors too', () => {
  const full = buildConfig(['--scenario', 'overload'], {}).config;
  assert.deepEqual(full.overload, { idle: 10_000, slowloris: 2_000, uploads: 1_000, cold: 5_000 });
  assert.equal(full.actors, 4 + 16 + 5_000);
  assert.ok(full.workers * full.workerCapacity >= full.actors);
  assert.equal(full.durationS, 10, 'each flood held 10 s');
  assert.equal(full.overloadHitRate, 1000);
  assert.equal(full.connections, 256, 'the paced hit load keeps its rate while answers take up to 256 ms');
  assert.equal(buildConfig(['--scenario', 'overload', '--connections', '8'], {}).config.connections, 8);
  assert.equal(buildConfig(['--scenario', 'overload', '--overload-hit-rate', '0'], {}).config.overloadHitRate, 0, '0: a closed loop');
  const quick = buildConfig(['--scenario', 'overload', '--quick'], {}).config;
  assert.deepEqual(quick.overload, { idle: 1_000, slowloris: 200, uploads: 100, cold: 500 });
  assert.equal(quick.actors, 520);
  assert.equal(quick.durationS, 3);
  const sized = buildConfig(['--scenario', 'overload', '--quick', '--overload-cold', '50', '--duration', '2', '--actors', '7'], { BENCH_OVERLOAD_IDLE: '300' }).config;
  assert.deepEqual(sized.overload, { idle: 300, slowloris: 200, uploads: 100, cold: 50 });
  assert.equal(sized.actors, 70, '--actors does not apply');
  assert.equal(sized.durationS, 2);
  assert.throws(() => buildConfig(['--scenario', 'overload', '--proxy-workers', '2'], {}), UsageError);
});

test('heavy-filter: 8 actors, 32 connections, a TTL no run outlives and 500 requests a second unless given', () => {
  const h = buildConfig(['--scenario', 'heavy-filter'], {}).config;
  assert.deepEqual([h.actors, h.connections, h.cacheTtlMs, h.heavyRate], [8, 32, 600_000, 500]);
  const given = buildConfig(['--scenario', 'heavy-filter', '--actors', '4', '--connections', '8', '--cache-ttl-ms', '5000', '--heavy-rate', '200'], {}).config;
  assert.deepEqual([given.actors, given.connections, given.cacheTtlMs, given.heavyRate], [4, 8, 5000, 200]);
  assert.equal(buildConfig([], {}).config.connections, 8, 'other scenarios keep their defaults');
});
