/**
 * The benchmark end to end, tiny: a real stub, extproc, proxy and floor, arms floor and C for one second each;
 * then the mTLS arm C-mtls against its own stub whose workers accept only mTLS. Checks that every arm answered,
 * the numbers hang together and the results were written, never how fast.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchReport } from './types.js';

const RUN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'run.js');
const outDirs: string[] = [];

after(async () => {
  await Promise.all(outDirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function freshOutDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-smoke-'));
  outDirs.push(dir);
  return dir;
}

async function readReport(outDir: string): Promise<BenchReport> {
  const json = (await readdir(outDir)).find((f) => f.endsWith('-steady.json'));
  assert.ok(json, 'no JSON report');
  return JSON.parse(await readFile(path.join(outDir, json), 'utf8')) as BenchReport;
}

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('npm run bench -- --quick with arms floor and C answers, counts and writes its results', { timeout: 60_000 }, async () => {
  const outDir = await freshOutDir();
  const { code, stdout, stderr } = await runBench(['--quick', '--arms', 'floor,C', '--duration', '1', '--warmup', '0.5', '--out-dir', outDir]);
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
  assert.ok(c.resumeCalls !== null && c.extprocStreams !== null);
  // Hot actors behind a cache with a 5 s TTL, one second measured: each of the 50 actors misses at most once
  // (one shared ResumeActor, perhaps one more if a request misses between the flight's answer and the learning),
  // and at worst all 8 connections miss the same actor at once. Cache off would be one of each per request.
  assert.ok(c.resumeCalls <= 2 * 50, `C made ${c.resumeCalls} ResumeActor calls`);
  assert.ok(c.extprocStreams <= 8 * 50, `C opened ${c.extprocStreams} ext_proc streams`);
  assert.ok(c.extprocStreams < c.requests / 2, `C opened ${c.extprocStreams} ext_proc streams for ${c.requests} requests`);
  assert.ok(c.cache && c.cache.hits > 0 && c.cache.hitRatio > 0.9, JSON.stringify(c.cache));
  assert.equal(typeof report.ratios['C/floor'], 'number');
  assert.ok(report.targets.some((t) => t.name.startsWith('C >= 95% of floor') && (t.status === 'met' || t.status === 'not-met')));
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
