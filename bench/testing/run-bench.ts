/** Runs `npm run bench` (dist/bench/run.js) as a child process, as the smoke tests do, and collects what it printed. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
