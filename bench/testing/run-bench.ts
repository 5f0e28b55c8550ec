/**
 * Runs `npm run bench` (dist/bench/run.js) as a child process, as the smoke tests do, and collects what it printed;
 * gives each run a directory of its own for its results, and reads the report back.
 */
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchReport } from '../types.js';

const RUN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'run.js');

export interface BenchRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runBench(args: readonly string[]): Promise<BenchRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const outDirs: string[] = [];

/** A fresh directory for one run's results (`--out-dir`); `removeOutDirs` removes every one made. */
export async function freshOutDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-smoke-'));
  outDirs.push(dir);
  return dir;
}

export async function removeOutDirs(): Promise<void> {
  await Promise.all(outDirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** The steady scenario's JSON report a run wrote into `outDir`. */
export async function readReport(outDir: string): Promise<BenchReport> {
  const json = (await readdir(outDir)).find((f) => f.endsWith('-steady.json'));
  assert.ok(json, 'no JSON report');
  return JSON.parse(await readFile(path.join(outDir, json), 'utf8')) as BenchReport;
}
