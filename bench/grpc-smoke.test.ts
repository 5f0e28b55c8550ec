/**
 * The grpc scenario end to end, quick: a real stub, extproc and proxy, grpc-js calls straight to the worker (direct)
 * and through the proxy (C). Checks that the run exits 0, writes its results, that every call was answered OK and
 * that the figures in the JSON are the ones its own numbers give — never how fast.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GRPC_OVERLAP_TARGET } from './report.js';
import { runBench } from './testing/run-bench.js';
import type { BenchReport } from './types.js';

let outDir = '';

after(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

const K = 6;
const REPLIES = 20;
const ROUNDS = 2;

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

test('npm run bench -- --quick --scenario grpc answers every call and reports figures its own numbers give', { timeout: 110_000 }, async () => {
  outDir = await mkdtemp(path.join(os.tmpdir(), 'bench-grpc-'));
  // A TTL no run outlives: however slow the machine, the bindings learned in the warm-up serve every measured call.
  const args = ['--quick', '--scenario', 'grpc', '--cache-ttl-ms', '600000', '--grpc-calls', String(K), '--grpc-replies', String(REPLIES), '--grpc-rounds', String(ROUNDS), '--out-dir', outDir];
  const { code, stdout, stderr } = await runBench(args);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /\| C \| \d+ \| 0 \| OK×\d+ \|/);

  const files = (await readdir(outDir)).sort();
  assert.deepEqual(files.map((f) => f.replace(/^.*-grpc\./, '')), ['json', 'md', 'svg']);
  const report = JSON.parse(await readFile(path.join(outDir, files[0] as string), 'utf8')) as BenchReport;
  assert.equal(report.scenario, 'grpc');
  assert.deepEqual(report.arms.map((a) => a.name), ['direct', 'C']);
  for (const arm of report.arms) {
    const g = arm.grpc;
    assert.ok(g, `${arm.name} has a grpc block`);
    // Every call: one at a time (at least 3), K per round, a unary call alone and a stream plus a unary call per round.
    const calls = Math.max(3, ROUNDS) + K * ROUNDS + ROUNDS + 2 * ROUNDS;
    assert.equal(arm.requests, calls, `${arm.name} calls`);
    assert.deepEqual(arm.statusCounts, { OK: calls }, `${arm.name}: every call answered OK`);
    assert.equal(arm.errors, 0);
    assert.equal(g.worker, report.arms[0]!.grpc!.worker, 'the same worker in every arm');
    assert.notEqual(g.unaryActor, g.streamActor, 'the unary calls go to another actor on that worker');
    assert.equal(g.aloneMs.length, Math.max(3, ROUNDS));
    assert.equal(g.rounds.length, ROUNDS);
    for (const r of g.rounds) {
      assert.equal(r.callMs.length, K);
      assert.equal(r.streamMs.length, K);
      assert.equal(r.errors, 0);
      assert.ok(close(r.callMsSum, sum(r.callMs)), `${r.callMsSum} is the sum of ${r.callMs.join(', ')}`);
      assert.ok(close(r.streamMsSum, sum(r.streamMs)), `${r.streamMsSum} is the sum of ${r.streamMs.join(', ')}`);
      // A call streams within its own duration (it asked for replies, so it streamed at all), which lies within the round's wall time.
      r.streamMs.forEach((s, i) => assert.ok(s > 0 && s <= r.callMs[i]! + 1e-9 && r.callMs[i]! <= r.wallMs + 1e-9, `call ${i}: streaming ${s} ms, duration ${r.callMs[i]} ms, wall ${r.wallMs} ms`));
    }
    const wall = sum(g.rounds.map((r) => r.wallMs));
    const overlap = sum(g.rounds.map((r) => r.streamMsSum)) / wall;
    assert.ok(close(g.overlap, overlap), `${arm.name} overlap ${g.overlap} is not ${overlap}`);
    assert.ok(close(g.durationOverlap, sum(g.rounds.map((r) => r.callMsSum)) / wall), `${arm.name} duration overlap ${g.durationOverlap}`);
    assert.ok(g.overlap > 0 && g.overlap <= g.durationOverlap + 1e-9 && g.durationOverlap <= K + 1e-9, `0 < overlap ${g.overlap} <= duration overlap ${g.durationOverlap} <= K`);
    assert.ok(close(g.wallPerCall, g.wallP50Ms / g.aloneP50Ms), `${arm.name} wall ÷ one call`);
    assert.ok(g.rounds.some((r) => r.wallMs === g.wallP50Ms) && g.aloneMs.includes(g.aloneP50Ms), 'the medians are measured values');
    assert.equal(g.unaryWhileStreaming.length, ROUNDS);
    for (const s of g.unaryWhileStreaming) assert.equal(s.ok, true);
    const overlapTarget = report.targets.find((t) => t.name.startsWith(`${arm.name}: ${K} concurrent streaming calls to one worker overlap`));
    assert.ok(overlapTarget, `${arm.name}: the overlap target is reported`);
    assert.equal(overlapTarget.status, g.wallP50Ms <= GRPC_OVERLAP_TARGET * g.aloneP50Ms ? 'met' : 'not-met', overlapTarget.detail);
    const unaryTarget = report.targets.find((t) => t.name === `${arm.name}: a unary call to the same worker is answered while a stream is open`);
    assert.ok(unaryTarget, `${arm.name}: the unary target is reported`);
    assert.equal(unaryTarget.status, g.unaryWhileStreaming.every((s) => s.ok && s.streamOpen) ? 'met' : 'not-met', unaryTarget.detail);
  }
  const c = report.arms[1]!;
  assert.deepEqual([c.cache?.hits, c.cache?.misses], [c.requests, 0], 'the warm-up learned both bindings: every measured call was one cache hit');
});
