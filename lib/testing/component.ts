/**
 * Test helper: starts a real component process (`actor-edge <component> ...`, through the project's launcher) and
 * waits for its "ready" log line, which carries the addresses it bound (port 0 → the OS chooses). Keeps all its
 * output for assertions; `stop()` sends SIGTERM (then SIGKILL) so no test leaves a process behind.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, type Launched } from '../launch.js';

/** The CLI entry (`actor-edge <component>`), compiled: every component runs through it, as in production. */
const CLI_SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/main.js');

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

function jsonLines(lines: readonly string[]): Record<string, unknown>[] {
  return lines.flatMap((l) => {
    if (!l.startsWith('{')) return [];
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** Starts `actor-edge <component> ...args` (every output line kept) and waits until it is ready. */
export async function startComponent(component: string, args: string[], opts: StartOptions = {}): Promise<RunningComponent> {
  const launched = await launch(component, CLI_SCRIPT, [component, ...args], {
    ...opts,
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...opts.env },
    readyTimeoutMs: opts.readyTimeoutMs ?? 15000,
  });
  return Object.assign(launched, { logs: () => jsonLines(launched.lines) });
}

/** A component started in the test's own process: the same addresses, logs and stop as a process. */
export interface InProcessComponent {
  /** The addresses its ready line would carry (`grpc`, `admin`, ...). */
  readonly addresses: Readonly<Record<string, string>>;
  /** Its JSON log lines so far. */
  logs(): Record<string, unknown>[];
  /** Stops it (as SIGTERM would: a drain, then everything closed). */
  stop(): Promise<void>;
}

/** A component handle whichever way it runs. */
export type ComponentHandle = RunningComponent | InProcessComponent;

export { collectingLogger } from '../collecting-logger.js';
