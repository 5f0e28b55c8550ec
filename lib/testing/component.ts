/**
 * Test helper: starts a real component process (`node dist/lib/cli.js <component> ...`) and waits for its
 * "ready" log line, which carries the addresses it bound (port 0 → the OS chooses). Collects its output for
 * assertions and stops it with SIGTERM (then SIGKILL) so no test leaves a process behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import net from 'node:net';
import { readyAddresses, splitLines } from '../ready-line.js';

export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../cli.js');

export interface RunningComponent {
  readonly child: ChildProcess;
  readonly addresses: Readonly<Record<string, string>>;
  /** Every stdout/stderr line so far (JSON log lines and anything else). */
  readonly lines: string[];
  /** Parsed JSON log lines so far. */
  logs(): Record<string, unknown>[];
  /** SIGTERM, wait for exit (SIGKILL after `graceMs`); resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  /** SIGKILL, wait for exit. */
  kill(): Promise<void>;
  readonly exited: Promise<number | null>;
}

export interface StartOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly readyTimeoutMs?: number;
  /** Print the component's output to stderr as it arrives (debugging). */
  readonly echo?: boolean;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export async function startComponent(component: string, args: string[], opts: StartOptions = {}): Promise<RunningComponent> {
  const child = spawn(process.execPath, [CLI, component, ...args], {
    env: { LOG_LEVEL: 'info', ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve(code ?? (signal ? null : code));
    });
  });
  let resolveReady!: (a: Record<string, string>) => void;
  let rejectReady!: (e: Error) => void;
  const ready = new Promise<Record<string, string>>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });
  const onLine = (line: string): void => {
    lines.push(line);
    if (opts.echo) process.stderr.write(`[${component}] ${line}\n`);
    const addresses = readyAddresses(line);
    if (addresses !== undefined) resolveReady({ ...addresses });
  };
  splitLines(child.stdout!, onLine);
  splitLines(child.stderr!, onLine);
  void exited.then((code) => rejectReady(new Error(`${component} exited (${code}) before ready:\n${lines.slice(-20).join('\n')}`)));
  const timeoutMs = opts.readyTimeoutMs ?? 15000;
  const timer = setTimeout(() => rejectReady(new Error(`${component} not ready within ${timeoutMs} ms:\n${lines.slice(-20).join('\n')}`)), timeoutMs);
  let addresses: Record<string, string>;
  try {
    addresses = await ready;
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return {
    child,
    addresses: Object.freeze(addresses),
    lines,
    exited,
    logs: () =>
      lines.flatMap((l) => {
        if (!l.startsWith('{')) return [];
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(t);
      }
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A TCP port that was free on 127.0.0.1 a moment ago (for listeners whose port must be known in advance). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address() as net.AddressInfo;
      s.close(() => resolve(a.port));
    });
  });
}

/**
 * A private worker network for one test stack: a random first worker IP in 127.16.0.0-127.254.x.x (Linux routes
 * all of 127.0.0.0/8 to loopback) and a free port, so stacks in parallel test files never collide.
 */
export async function workerNet(): Promise<{ ipBase: string; port: number }> {
  const b = 16 + Math.floor(Math.random() * 238);
  const c = Math.floor(Math.random() * 256);
  return { ipBase: `127.${b}.${c}.1`, port: await freePort() };
}
