/**
 * The benchmark end to end, tiny: a real stub, extproc, proxy and floor, arms floor and C for one second each;
 * then the mTLS arm C-mtls against its own stub whose workers accept only mTLS. Checks that every arm answered,
 * the numbers hang together and the results were written, never how fast. (The h2load arms and `--tracing on`
 * have files of their own, so that each file's runs fit the per-file timeout on a loaded machine.)
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { CPU_TARGET, FLOOR_TARGET } from './report.js';
import { freshOutDir, readReport, removeOutDirs, runBench } from './testing/run-bench.js';

after(removeOutDirs);

/** The load's concurrency (the benchmark's default) and hot actors (the steady scenario's default). */
const CONNECTIONS = 8;
const ACTORS = 50;

test('npm run bench -- --quick with arms floor and C answers, counts and writes its results', { timeout: 120_000 }, async () => {
  const outDir = await freshOutDir();
  // A TTL no run outlives: however slow the machine, no binding learned during the run expires.
  const { code, stdout, stderr } = await runBench([
    '--quick', '--arms', 'floor,C', '--duration', '2', '--warmup', '1', '--cache-ttl-ms', '600000', '--out-dir', outDir,
    '--connections', String(CONNECTIONS), '--actors', String(ACTORS),
  ]);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /\| floor \| [\d,]+ \|/);
  assert.match(stdout, /\| C \| [\d,]+ \|/);
  const files = (await readdir(outDir)).sort();
  assert.equal(files.length, 3, files.join(', '));
  assert.ok(files.some((f) => f.endsWith('-steady.md')) && files.some((f) => f.endsWith('-steady.svg')));
  const report = await readReport(outDir);
  assert.equal(report.scenario, 'steady');
  assert.deepEqual(report.arms.map((a) => a.name), ['floor', 'C']);
  for (const arm of report.arms) {
    assert.ok(arm.requests > 0 && arm.rps > 0, `${arm.name} answered`);
    assert.equal(arm.non2xx, 0, `${arm.name} non-2xx`);
    assert.ok(arm.p50Ms > 0 && arm.p50Ms <= arm.p99Ms && arm.p99Ms <= arm.maxMs, `${arm.name} latency order`);
    assert.ok((arm.cpuMsPerRequest ?? 0) > 0, `${arm.name} CPU counted`);
  }
  const c = report.arms.find((a) => a.name === 'C')!;
  assert.ok(c.resumeCalls !== null && c.extprocStreams !== null && c.cache !== undefined);
  // These bounds hold however few requests a loaded machine completes. A binding, once learned, serves its actor
  // for the rest of the run, so an actor misses only while its first lookup is still on its way: at most once per
  // connection. Cache off would miss on every request.
  const { hits, misses } = c.cache;
  assert.ok(misses <= CONNECTIONS * ACTORS, `C missed ${misses} times`);
  // Every request the load generator counted was looked up in the window; up to one per connection may still
  // have been in the proxy when the window closed (plus any the load generator gave up on). Streams and
  // ResumeActor calls are counted by other processes, a little after the proxy's miss, so the same slack applies
  // at both ends of the window.
  const slack = CONNECTIONS + c.errors;
  assert.ok(hits + misses >= c.requests && hits + misses <= c.requests + slack, `${hits} hits + ${misses} misses for ${c.requests} requests`);
  // A miss opens its own ext_proc stream unless it waited for another connection's miss of the same actor and was
  // routed from the binding that one learned (coalesced): those open none, so streams follow the misses less them.
  // A follower is counted as a miss when it looks up and as coalesced when its leader settles, so one whose
  // leader settled after the window opened may have missed before it: the same slack.
  const { coalesced } = c.cache;
  assert.ok(coalesced >= 0 && coalesced <= misses + slack, `${coalesced} coalesced of ${misses} misses`);
  const ownStreams = misses - coalesced;
  assert.ok(Math.abs(c.extprocStreams - ownStreams) <= slack, `C opened ${c.extprocStreams} ext_proc streams for ${misses} misses, ${coalesced} of them coalesced`);
  assert.ok(c.resumeCalls <= ownStreams + slack, `C made ${c.resumeCalls} ResumeActor calls for ${ownStreams} misses with a stream of their own`);
  // The ratio is C's throughput over the floor's, from this run's own numbers (NaN, Infinity or a stale value fail).
  const floor = report.arms.find((a) => a.name === 'floor')!;
  const share = report.ratios['C/floor'];
  assert.ok(typeof share === 'number' && Number.isFinite(share) && share > 0, `C/floor ratio ${String(share)}`);
  assert.ok(Math.abs(share - c.rps / floor.rps) < 1e-9, `C/floor ${share} is not ${c.rps} / ${floor.rps}`);
  // The target is judged from that ratio: met exactly when C reached 95 % of the floor.
  const target = report.targets.find((t) => t.name.startsWith('C >= 95% of floor'));
  assert.ok(target, 'the floor target is reported');
  assert.equal(target.status, share >= FLOOR_TARGET ? 'met' : 'not-met', target.detail);
  const cpu = report.targets.find((t) => t.name.startsWith('C proxy CPU per request'));
  assert.ok(cpu, 'the CPU target is reported');
  const front = (arm: typeof c): number => arm.components.find((p) => p.component === 'proxy' || p.component === 'floor')!.cpuMsPerRequest!;
  assert.equal(cpu.status, front(c) / front(floor) <= CPU_TARGET ? 'met' : 'not-met', cpu.detail);
});

test('the mTLS arm C-mtls answers through workers that accept only mTLS', { timeout: 90_000 }, async () => {
  const outDir = await freshOutDir();
  const { code, stdout, stderr } = await runBench(['--quick', '--arms', 'C-mtls', '--duration', '1', '--warmup', '0.5', '--out-dir', outDir]);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /\| C-mtls \| [\d,]+ \|/);
  const report = await readReport(outDir);
  assert.deepEqual(report.arms.map((a) => a.name), ['C-mtls']);
  const arm = report.arms[0]!;
  // A proxy that did not present its certificate, or presented another identity, would get no answer at all.
  assert.ok(arm.requests > 0 && arm.rps > 0, 'C-mtls answered');
  assert.equal(arm.non2xx, 0, 'C-mtls non-2xx');
  assert.equal(arm.errors, 0, 'C-mtls errors');
  assert.ok(arm.cache && arm.cache.hits > 0, JSON.stringify(arm.cache));
});
