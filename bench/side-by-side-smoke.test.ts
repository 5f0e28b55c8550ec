/**
 * The side-by-side scenario end to end, tiny: the floor, arm C, the same build started as a "compare build" and a
 * control copy of C, all loaded at once for two short rounds. Checks that every arm answered in every round, that
 * the per-round numbers and ratios are this run's own, and that the files were written; never how fast.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConfig } from './config.js';
import { sideBySideArms, type SideBySideReport } from './side-by-side.js';
import { freshOutDir, removeOutDirs, runBench } from './testing/run-bench.js';

after(removeOutDirs);

/** Requests a second sent to each arm: far fewer than a closed loop on two connections answers in a second. */
const RATE = 50;

/**
 * Seconds per round: long enough that every arm answers something in every round on a busy machine (a 1 s round
 * once saw an arm stalled for all of it while other test files loaded both cores).
 */
const ROUND_S = 3;

/** The checkout this test runs from: the folder holding dist/. */
const CHECKOUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

test('side-by-side: floor, C, another build and a control copy answer in every round; ratios are taken round by round', { timeout: 180_000 }, async () => {
  const outDir = await freshOutDir();
  const { code, stdout, stderr } = await runBench([
    '--scenario', 'side-by-side', '--arms', 'floor,C', '--compare-build', CHECKOUT, '--control',
    '--rounds', '2', '--duration', String(ROUND_S), '--warmup', '1', '--actors', '10', '--connections', '2', '--cache-ttl-ms', '600000', '--out-dir', outDir,
    '--rate', String(RATE),
  ]);
  assert.equal(code, 0, stderr);
  const other = `C@${path.basename(CHECKOUT)}`;
  const files = (await readdir(outDir)).sort();
  assert.deepEqual(files.map((f) => f.replace(/^.*-side-by-side/, 'side-by-side')), ['side-by-side.json', 'side-by-side.md']);
  const report = JSON.parse(await readFile(path.join(outDir, files[0] as string), 'utf8')) as SideBySideReport;
  assert.equal(report.scenario, 'side-by-side');
  assert.deepEqual(report.arms, ['floor', 'C', other, 'C copy']);
  assert.deepEqual(report.failures, []);
  assert.equal(report.rounds.length, 2);
  for (const [k, round] of report.rounds.entries()) {
    for (const arm of report.arms) {
      const us = round[arm];
      assert.ok(us !== undefined && Number.isFinite(us) && us > 0, `round ${k + 1}: ${arm} CPU per request ${String(us)}`);
      const answered = report.requests[k]?.[arm] ?? 0;
      assert.ok(answered > 0, `round ${k + 1}: ${arm} answered`);
      // --rate: autocannon lets each connection send its share of RATE per second, counted again on a 1 s timer
      // from its start, so a load that took s seconds sends at most RATE × (⌈s⌉ + 1); a round overruns its
      // ROUND_S on a busy machine. A closed loop on two connections sends many times that.
      const took = report.seconds[k]?.[arm] ?? NaN;
      assert.ok(took >= ROUND_S - 0.5 && took < 60, `round ${k + 1}: ${arm} loaded for ${took} s`);
      assert.ok(answered <= RATE * (Math.ceil(took) + 1), `round ${k + 1}: ${arm} answered ${answered} in ${took} s at --rate ${RATE}`);
    }
  }
  const byName = new Map(report.ratios.map((r) => [`${r.arm} ÷ ${r.base}`, r]));
  assert.deepEqual([...byName.keys()], [`C ÷ floor`, `${other} ÷ floor`, `C copy ÷ floor`, `${other} ÷ C`, `C copy ÷ C`]);
  // Each ratio is the mean of the two rounds' own ratios (not a ratio of means, not a stale number).
  for (const r of report.ratios) {
    const perRound = report.rounds.map((round) => (round[r.arm] as number) / (round[r.base] as number));
    assert.equal(r.n, 2);
    assert.ok(Math.abs(r.mean - (perRound[0]! + perRound[1]!) / 2) < 1e-9, `${r.arm} ÷ ${r.base}: ${r.mean} vs ${perRound.join(', ')}`);
  }
  assert.match(stdout, /\| C copy ÷ C \| 2 \| [\d.]+ \| [\d.]+ \|/);
  assert.match(stderr, /round 2\/2 \(/);
});

test('side-by-side: arms it cannot load the same way, or fewer than two, are refused before anything starts', () => {
  const arms = (argv: string[]) => sideBySideArms(buildConfig(['--scenario', 'side-by-side', ...argv]).config).map((a) => a.name);
  assert.deepEqual(arms([]), ['floor', 'C']);
  assert.deepEqual(arms(['--arms', 'C', '--control']), ['C', 'C copy']);
  assert.deepEqual(arms(['--arms', 'floor', '--compare-build', '/srv/old-build']), ['floor', 'C@old-build']);
  assert.throws(() => arms(['--arms', 'C']), /at least two arms/);
  assert.throws(() => arms(['--arms', 'floor,C-h2c']), /C-h2c cannot run side by side/);
  assert.throws(() => arms(['--arms', 'floor,fleet-rr']), /fleet-rr cannot run side by side/);
});
