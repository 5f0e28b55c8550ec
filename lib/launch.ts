/**
 * Starts a Node.js process of this project (a component through the CLI, or another script such as the bench's
 * floor forwarder), waits for its "ready" log line, which carries the addresses it bound, and stops it with
 * SIGTERM (SIGKILL after a grace period). Every process started here is killed if the parent exits, so nothing
 * outlives the benchmark or a test run. Used by the benchmark and by the test helper.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { readyAddresses, splitLines } from './ready-line.js';

/** The CLI entry (`actor-edge <component>`), compiled. */
export const CLI_SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'cli.js');

export interface LaunchOptions {
  /** Added to this process's environment; LOG_LEVEL defaults to info (the ready line is an info line). */
  readonly env?: NodeJS.ProcessEnv;
  readonly readyTimeoutMs?: number;
  /** Copy the process's output to stderr, prefixed with its label. */
  readonly echo?: boolean;
  /** How many of the latest output lines to keep (default: all). */
  readonly keepLines?: number;
}

export interface Launched {
  readonly label: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly addresses: Readonly<Record<string, string>>;
  /** The process's stdout and stderr lines so far (the latest `keepLines`). */
  readonly lines: string[];
  /** Resolves with the exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, wait for exit (SIGKILL after `graceMs`); resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  /** SIGKILL, wait for exit. */
  kill(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Kills every process started here that has not exited yet (on exit, and on Ctrl-C in the benchmark). */
export function killAll(): void {
  for (const c of running) c.kill('SIGKILL');
}

process.once('exit', killAll);

function gone(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

export async function launch(label: string, script: string, args: readonly string[], opts: LaunchOptions = {}): Promise<Launched> {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const keep = opts.keepLines ?? Infinity;
  const lines: string[] = [];
  const recent = (): string => lines.slice(-20).join('\n');
  let onReady!: (a: Readonly<Record<string, string>>) => void;
  let onFail!: (e: Error) => void;
  const ready = new Promise<Readonly<Record<string, string>>>((res, rej) => {
    onReady = res;
    onFail = rej;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running.delete(child);
      onFail(new Error(`${label} exited (${code}) before it was ready:\n${recent()}`));
      resolve(code);
    });
  });
  const onLine = (line: string): void => {
    lines.push(line);
    if (lines.length > keep) lines.shift();
    if (opts.echo) process.stderr.write(`[${label}] ${line}\n`);
    const addresses = readyAddresses(line);
    if (addresses !== undefined) onReady(addresses);
  };
  splitLines(child.stdout!, onLine);
  splitLines(child.stderr!, onLine);
  const timeoutMs = opts.readyTimeoutMs ?? 30_000;
  const timer = setTimeout(() => onFail(new Error(`${label} not ready within ${timeoutMs} ms:\n${recent()}`)), timeoutMs);
  let addresses: Readonly<Record<string, string>>;
  try {
    addresses = await ready;
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return {
    label,
    child,
    pid: child.pid ?? -1,
    addresses,
    lines,
    exited,
    async stop(graceMs = 5000) {
      if (gone(child)) return child.exitCode;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(t);
      }
    },
    async kill() {
      if (gone(child)) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Starts `actor-edge <component> ...args`. */
export function launchComponent(component: string, args: readonly string[], opts: LaunchOptions = {}): Promise<Launched> {
  return launch(component, CLI_SCRIPT, [component, ...args], opts);
}
