/**
 * Test helper: starts a real component process (`node dist/lib/cli.js <component> ...`, through lib/launch.ts) and
 * waits for its "ready" log line, which carries the addresses it bound (port 0 → the OS chooses). Keeps all its
 * output for assertions; `stop()` sends SIGTERM (then SIGKILL) so no test leaves a process behind.
 */
import net from 'node:net';
import { launchComponent, type Launched } from '../launch.js';

export { CLI_SCRIPT as CLI } from '../launch.js';

export interface RunningComponent extends Launched {
  /** Parsed JSON log lines so far. */
  logs(): Record<string, unknown>[];
}

export interface StartOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly readyTimeoutMs?: number;
  /** Print the component's output to stderr as it arrives (debugging). */
  readonly echo?: boolean;
}

/** Starts `actor-edge <component> ...args` (every output line kept) and waits until it is ready. */
export async function startComponent(component: string, args: string[], opts: StartOptions = {}): Promise<RunningComponent> {
  const launched = await launchComponent(component, args, {
    ...opts,
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...opts.env },
    readyTimeoutMs: opts.readyTimeoutMs ?? 15000,
  });
  return {
    ...launched,
    logs: () =>
      launched.lines.flatMap((l) => {
        if (!l.startsWith('{')) return [];
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
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
