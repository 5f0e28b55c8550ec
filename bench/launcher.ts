/**
 * Starts the benchmark's processes the way they are deployed: one OS process per component
 * (`node dist/lib/cli.js <component> ...`) plus the floor forwarder (`node dist/bench/floor.js`). Each prints one
 * "ready" JSON log line with the addresses it bound; the launcher waits for it, keeps the last lines for error
 * messages, and stops the process with SIGTERM (SIGKILL after a grace period). Nothing outlives the benchmark.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { readyAddresses, splitLines } from '../lib/ready-line.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const CLI_SCRIPT = path.resolve(HERE, '../lib/cli.js');
export const FLOOR_SCRIPT = path.resolve(HERE, 'floor.js');

export interface Launched {
  readonly label: string;
  readonly pid: number;
  readonly addresses: Readonly<Record<string, string>>;
  /** The last lines the process wrote (for error messages). */
  tail(): string[];
  stop(graceMs?: number): Promise<void>;
  readonly exited: Promise<number | null>;
}

export interface LaunchOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly readyTimeoutMs?: number;
  /** Copy the process's output to stderr, prefixed with its label. */
  readonly echo?: boolean;
}

const running = new Set<ChildProcess>();

/** Kills every process the launcher started and has not seen exit (used on exit and on Ctrl-C). */
export function killAll(): void {
  for (const c of running) c.kill('SIGKILL');
}

process.once('exit', killAll);

const TAIL = 40;

export async function launch(label: string, script: string, args: readonly string[], opts: LaunchOptions = {}): Promise<Launched> {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const lines: string[] = [];
  let onReady!: (a: Record<string, string>) => void;
  let onFail!: (e: Error) => void;
  const ready = new Promise<Record<string, string>>((res, rej) => {
    onReady = res;
    onFail = rej;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running.delete(child);
      onFail(new Error(`${label} exited (${code}) before it was ready:\n${lines.join('\n')}`));
      resolve(code);
    });
  });
  const onLine = (line: string): void => {
    lines.push(line);
    if (lines.length > TAIL) lines.shift();
    if (opts.echo) process.stderr.write(`[${label}] ${line}\n`);
    const addresses = readyAddresses(line);
    if (addresses !== undefined) onReady(addresses);
  };
  splitLines(child.stdout, onLine);
  splitLines(child.stderr, onLine);
  const timeoutMs = opts.readyTimeoutMs ?? 30_000;
  const timer = setTimeout(() => onFail(new Error(`${label} not ready within ${timeoutMs} ms:\n${lines.join('\n')}`)), timeoutMs);
  let addresses: Record<string, string>;
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
    pid: child.pid ?? -1,
    addresses: Object.freeze(addresses),
    tail: () => [...lines],
    exited,
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        await exited;
      } finally {
        clearTimeout(t);
      }
    },
  };
}

export function launchComponent(component: string, args: readonly string[], opts: LaunchOptions = {}): Promise<Launched> {
  return launch(component, CLI_SCRIPT, [component, ...args], opts);
}

export function launchFloor(args: readonly string[], opts: LaunchOptions = {}): Promise<Launched> {
  return launch('floor', FLOOR_SCRIPT, args, opts);
}
