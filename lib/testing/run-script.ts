/** Test helper: runs a node script to its end (a real process) and returns its exit code and output. */
import { execFile } from 'node:child_process';

export interface ScriptRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runScript(script: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<ScriptRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [script, ...args],
      { env: opts.env ?? { PATH: process.env.PATH ?? '' }, cwd: opts.cwd, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 8 << 20 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
