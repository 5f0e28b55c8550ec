#!/usr/bin/env node
/**
 * `node dist/bench/testing/record-fixtures.js [name ...]`: runs the benchmark once per fixture (all of them, or
 * the ones named) and writes each run's JSON report to `bench/testing/fixtures/<name>.json`, the recorded reports
 * `report-checks.test.ts` runs the checks on. A report is kept only when it passes its checks. It is trimmed of
 * the raw `/stats` bodies (no check reads them) and of the checkout's folder name (side-by-side's compare build).
 * Takes about four minutes on two cores; run it on a quiet machine after changing what a report holds.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkReport, type CheckedScenario } from '../report-checks.js';

/** The checkout this runs from: the folder holding dist/. */
const CHECKOUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RUN = path.join(CHECKOUT, 'dist', 'bench', 'run.js');
export const FIXTURES = path.join(CHECKOUT, 'bench', 'testing', 'fixtures');

/** What the compare build is called in a fixture, whatever the checkout's folder is called. */
export const COMPARE_BUILD_NAME = 'actor-edge';

export interface Fixture {
  readonly name: string;
  readonly scenario: CheckedScenario;
  readonly args: readonly string[];
}

/**
 * Each fixture's run: short, as `.ci/run` makes them. A TTL no run outlives where a check counts on bindings
 * never expiring (every miss at most once per connection; every grpc call a hit).
 */
export const FIXTURE_RUNS: readonly Fixture[] = [
  { name: 'steady-floor-C', scenario: 'steady', args: ['--quick', '--arms', 'floor,C', '--duration', '2', '--warmup', '1', '--cache-ttl-ms', '600000', '--connections', '8', '--actors', '50'] },
  { name: 'steady-quick', scenario: 'steady', args: ['--quick'] },
  { name: 'steady-C-mtls', scenario: 'steady', args: ['--quick', '--arms', 'C-mtls', '--duration', '1', '--warmup', '0.5'] },
  { name: 'steady-h2load', scenario: 'steady', args: ['--quick', '--arms', 'C-h2c,C-h2', '--duration', '1', '--warmup', '0.5'] },
  { name: 'steady-tracing', scenario: 'steady', args: ['--quick', '--arms', 'C', '--duration', '1', '--warmup', '0.5', '--tracing', 'on', '--trace-ratio', '1'] },
  { name: 'faults', scenario: 'faults', args: ['--quick', '--scenario', 'faults'] },
  { name: 'grpc', scenario: 'grpc', args: ['--quick', '--scenario', 'grpc', '--cache-ttl-ms', '600000', '--grpc-calls', '6', '--grpc-replies', '20', '--grpc-rounds', '2'] },
  { name: 'fleet', scenario: 'fleet', args: ['--quick', '--scenario', 'fleet'] },
  { name: 'egress', scenario: 'egress', args: ['--quick', '--scenario', 'egress'] },
  { name: 'heavy-filter', scenario: 'heavy-filter', args: ['--quick', '--scenario', 'heavy-filter'] },
  {
    name: 'side-by-side',
    scenario: 'side-by-side',
    args: ['--scenario', 'side-by-side', '--arms', 'floor,C', '--compare-build', CHECKOUT, '--control', '--rounds', '2', '--duration', '3', '--warmup', '1', '--actors', '10', '--connections', '2', '--cache-ttl-ms', '600000', '--rate', '50'],
  },
];

/** The report as a fixture: without the raw `/stats` bodies, and with `checkout`'s folder name replaced. */
export function asFixture(report: unknown, checkout: string): unknown {
  const r = report as { arms: unknown[]; settings: Record<string, unknown> };
  const trimmed = {
    ...r,
    arms: r.arms.map((a) => {
      if (typeof a !== 'object' || a === null) return a;
      const { stats: _stats, ...rest } = a as Record<string, unknown>;
      return rest;
    }),
  };
  const base = path.basename(checkout);
  return JSON.parse(JSON.stringify(trimmed).replaceAll(`"C@${base}"`, `"C@${COMPARE_BUILD_NAME}"`).replaceAll(`"compareBuild":"${base}"`, `"compareBuild":"${COMPARE_BUILD_NAME}"`));
}

function runBench(args: readonly string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RUN, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('exit', (code) => resolve(code));
  });
}

async function record(f: Fixture): Promise<string[]> {
  const outDir = await mkdtemp(path.join(os.tmpdir(), `bench-fixture-${f.name}-`));
  try {
    const code = await runBench([...f.args, '--out-dir', outDir]);
    if (code !== 0) return [`the bench exited ${String(code)}`];
    const json = (await readdir(outDir)).find((x) => x.endsWith(`-${f.scenario}.json`));
    if (json === undefined) return ['no report written'];
    const fixture = asFixture(JSON.parse(await readFile(path.join(outDir, json), 'utf8')), CHECKOUT);
    const problems = checkReport(f.scenario, fixture);
    if (problems.length === 0) await writeFile(path.join(FIXTURES, `${f.name}.json`), JSON.stringify(fixture, null, 2) + '\n');
    return problems;
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

async function main(names: readonly string[]): Promise<number> {
  const unknown = names.filter((n) => !FIXTURE_RUNS.some((f) => f.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`record-fixtures: no fixture ${unknown.join(', ')} (of ${FIXTURE_RUNS.map((f) => f.name).join(', ')})\n`);
    return 2;
  }
  let failed = 0;
  for (const f of FIXTURE_RUNS.filter((x) => names.length === 0 || names.includes(x.name))) {
    process.stderr.write(`record-fixtures: ${f.name}: bench ${f.args.join(' ')}\n`);
    const problems = await record(f);
    if (problems.length > 0) failed++;
    process.stderr.write(problems.length === 0 ? `record-fixtures: wrote ${f.name}.json\n` : `record-fixtures: ${f.name} NOT recorded:\n${problems.map((x) => `  - ${x}\n`).join('')}`);
  }
  return failed > 0 ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`record-fixtures: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
