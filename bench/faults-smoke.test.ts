/**
 * The faults scenario end to end, quick: separate worker processes, a stub, extproc and the proxy, with a worker
 * killed, extproc restarted and the control plane down in one measured window. Checks counts that must hold
 * whatever the machine's speed — the run exits 0, every phase is reported and saw answers, the kill was felt and
 * nothing was delivered twice — never how fast.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runBench } from './testing/run-bench.js';
import type { BenchReport, FaultPhase } from './types.js';

let outDir = '';

after(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

test('npm run bench -- --quick --scenario faults runs every phase and reports it', { timeout: 110_000 }, async () => {
  outDir = await mkdtemp(path.join(os.tmpdir(), 'bench-faults-'));
  const { code, stdout, stderr } = await runBench(['--quick', '--scenario', 'faults', '--out-dir', outDir]);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /\| C \| \(a\) worker killed \|/);

  const json = (await readdir(outDir)).find((f) => f.endsWith('-faults.json'));
  assert.ok(json, 'the report was written');
  const report = JSON.parse(await readFile(path.join(outDir, json), 'utf8')) as BenchReport;
  assert.deepEqual(report.arms.map((a) => a.name), ['C']);
  const f = report.arms[0]?.faults;
  assert.ok(f, 'the arm has a faults block');
  assert.deepEqual(f.phases.map((p) => p.name), ['baseline', '(a) worker killed', '(b) extproc restart', '(c) control plane down', 'recovery']);
  for (const p of f.phases) assert.ok(p.requests > 0, `${p.name} saw answers`);
  assert.equal(f.workerProcesses, 4);
  assert.ok(f.killedActors > 0, 'the killed worker hosted actors');
  const killed = f.phases[1]!;
  assert.ok(killed.connectFailures + killed.resets > 0, 'the proxy felt the kill');
  assert.ok(killed.reruns > 0, 'and re-ran requests');
  assert.equal(f.phases[0]!.non2xx, 0, 'nothing failed before the faults');
  assert.equal(report.arms[0]!.duplicates, 0);
  // The 502s the proxy reports as resets of non-replayable requests already written are its own count, never more
  // than the 502s the client saw, nor than the resets it counted.
  for (const p of f.phases) assert.ok(p.non2xxNotReplayable <= (p.statusCounts['502'] ?? 0) && p.non2xxNotReplayable <= p.resetsNotReplayable, p.name);
  const sum = (k: 'resets' | 'resetsNotReplayable') => f.phases.reduce((n, p) => n + p[k], 0);
  assert.ok(sum('resetsNotReplayable') <= sum('resets'), 'every request reset after it was written is a reset');
  // Each fault's targets are judged from its phase's own counts: no client-visible error (in (a), none but those
  // resets), and during the outages enough misses (the requests for cold actors) that the first says something
  // about misses.
  for (const [prefix, index] of [['(a)', 1], ['(b)', 2], ['(c)', 3]] as const) {
    const target = report.targets.find((t) => t.name.includes(`${prefix} no client-visible error`));
    assert.ok(target, `the ${prefix} target is reported`);
    const phase: FaultPhase = f.phases[index]!;
    const excused = prefix === '(a)' ? phase.non2xxNotReplayable : 0;
    assert.equal(target.status, phase.non2xx - excused + phase.errors === 0 ? 'met' : 'not-met', target.detail);
    assert.ok(phase.hits + phase.misses > 0, `${phase.name} counted its cache lookups`);
    if (prefix === '(a)') continue;
    const misses = report.targets.find((t) => t.name.includes(`${prefix} at least 20 misses`));
    assert.ok(misses, `the ${prefix} misses target is reported`);
    assert.equal(misses.status, phase.misses >= 20 ? 'met' : 'not-met', misses.detail);
  }
  assert.ok(f.coldRequests > 0, 'requests for cold actors went out during the outages');
  const connects = report.targets.find((t) => t.name.includes('(a) failed connects per proxy process'));
  assert.ok(connects, 'the (a) target is reported');
  assert.equal(connects.status, killed.connectFailures / Math.max(1, f.proxyProcesses) <= 1 ? 'met' : 'not-met', connects.detail);
});
