/**
 * The one process launcher, used by `npm start`, the benchmark and the tests. It starts a Node.js script of this
 * project (a component through the CLI, or another script such as the bench's floor forwarder) in its own process
 * group, splits its output into lines, resolves `ready` with the addresses from its "ready" log line, and stops it
 * with SIGTERM (SIGKILL to its whole group after a grace period).
 *
 * Nothing outlives the launcher: every child gets the exit-with-launcher preload and a stdin pipe that stays open,
 * unwritten, for the child's whole life; the preload stops the child when that pipe closes, i.e. when the
 * launching process is gone for any reason, even SIGKILL. Children still running when the launching process exits
 * are killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { readyAddresses, splitLines } from './ready-line.js';

const EXIT_WITH_LAUNCHER = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'exit-with-launcher.js')).href;

export type Addresses = Readonly<Record<string, string>>;

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** How a stop ended: the process exited after SIGTERM, or its group was killed after the grace period. */
export type StopResult = { readonly kind: 'exited'; readonly exit: Exit } | { readonly kind: 'killed'; readonly exit: Exit };

/** Why a process never wrote its ready line. */
export type NotReady = { readonly kind: 'exited'; readonly exit: Exit } | { readonly kind: 'timeout'; readonly timeoutMs: number };

export class NotReadyError extends Error {
  constructor(
    readonly label: string,
    readonly reason: NotReady,
    recentOutput: string,
  ) {
    const what = reason.kind === 'timeout' ? `not ready within ${reason.timeoutMs} ms` : `exited (${describeExit(reason.exit)}) before it was ready`;
    super(`${label} ${what}:\n${recentOutput}`);
  }
}

export interface LaunchOptions {
  /** Added to this process's environment; LOG_LEVEL defaults to info (the ready line is an info line). */
  readonly env?: NodeJS.ProcessEnv;
  /** `ready` rejects after this long (default 30 s). */
  readonly readyTimeoutMs?: number;
  /** Copy the process's output to stderr, prefixed with its label. */
  readonly echo?: boolean;
  /** How many of the latest output lines to keep in `lines` (default: all). */
  readonly keepLines?: number;
  /** Called with every line the process writes to stdout or stderr. */
  readonly onLine?: (line: string) => void;
  /** Extra Node.js flags before the script (e.g. `--cpu-prof`); node:cluster workers inherit them. */
  readonly nodeArgs?: readonly string[];
}

const running = new Set<LaunchedProcess>();

/** Kills every process started here that has not exited yet (on exit, and on Ctrl-C in the benchmark). */
export function killAll(): void {
  for (const p of running) p.killGroup();
}

process.once('exit', killAll);

export function describeExit(e: Exit): string {
  return e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
}

/** One started process. Created by `spawnProcess`; `launch` also waits for its ready line. */
export class LaunchedProcess {
  readonly pid: number;
  /** The process's stdout and stderr lines so far (the latest `keepLines`). */
  readonly lines: string[] = [];
  /** Resolves with the addresses of the ready line; rejects with a NotReadyError. */
  readonly ready: Promise<Addresses>;
  /** Resolves with the exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  #exit: Exit | undefined;
  readonly #ended: Promise<Exit>;

  constructor(
    readonly label: string,
    readonly child: ChildProcess,
    opts: LaunchOptions,
  ) {
    if (child.pid === undefined) throw new Error(`could not start ${label}`);
    this.pid = child.pid;
    running.add(this);
    this.#ended = new Promise<Exit>((resolve) => {
      child.once('exit', (code, signal) => {
        running.delete(this);
        child.stdin?.destroy();
        this.#exit = { code, signal };
        resolve(this.#exit);
      });
    });
    this.exited = this.#ended.then((e) => e.code);
    this.ready = this.watchOutput(this.#ended, opts);
    this.ready.catch(() => undefined);
  }

  /** How it ended, once it has. */
  get exit(): Exit | undefined {
    return this.#exit;
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  /** SIGTERM, wait for exit (SIGKILL to the group after `graceMs`); resolves with the exit code. */
  async stop(graceMs = 5000): Promise<number | null> {
    return (await this.terminate(graceMs)).exit.code;
  }

  /** SIGTERM, wait for exit (SIGKILL to the group after `graceMs`); says whether the kill was needed. */
  async terminate(graceMs: number): Promise<StopResult> {
    if (this.#exit) return { kind: 'exited', exit: this.#exit };
    this.signal('SIGTERM');
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      this.killGroup();
    }, graceMs);
    const exit = await this.#ended;
    clearTimeout(timer);
    return killed ? { kind: 'killed', exit } : { kind: 'exited', exit };
  }

  /** SIGKILL to the process group, wait for exit. */
  async kill(): Promise<void> {
    this.killGroup();
    await this.exited;
  }

  /** SIGKILL to the process's group (it and anything it started); does not wait. */
  killGroup(): void {
    if (!this.running) return;
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      this.signal('SIGKILL');
    }
  }

  private signal(sig: NodeJS.Signals): void {
    try {
      this.child.kill(sig);
    } catch {
      /* already gone */
    }
  }

  private watchOutput(exit: Promise<Exit>, opts: LaunchOptions): Promise<Addresses> {
    const keep = opts.keepLines ?? Infinity;
    const timeoutMs = opts.readyTimeoutMs ?? 30_000;
    const recent = (): string => this.lines.slice(-20).join('\n');
    return new Promise<Addresses>((resolve, reject) => {
      const notReady = (reason: NotReady): void => {
        clearTimeout(timer);
        reject(new NotReadyError(this.label, reason, recent()));
      };
      const timer = setTimeout(() => notReady({ kind: 'timeout', timeoutMs }), timeoutMs);
      const onLine = (line: string): void => {
        this.lines.push(line);
        if (this.lines.length > keep) this.lines.shift();
        if (opts.echo) process.stderr.write(`[${this.label}] ${line}\n`);
        opts.onLine?.(line);
        const addresses = readyAddresses(line);
        if (addresses === undefined) return;
        clearTimeout(timer);
        resolve(addresses);
      };
      splitLines(this.child.stdout!, onLine);
      splitLines(this.child.stderr!, onLine);
      void exit.then((e) => notReady({ kind: 'exited', exit: e }));
    });
  }
}

/** Starts `node <script> ...args` and returns at once; see `ready` and `exited`. */
export function spawnProcess(label: string, script: string, args: readonly string[], opts: LaunchOptions = {}): LaunchedProcess {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', EXIT_WITH_LAUNCHER, script, ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdin?.on('error', () => undefined);
  return new LaunchedProcess(label, child, opts);
}

export interface Launched extends LaunchedProcess {
  readonly addresses: Addresses;
}

/** Starts `node <script> ...args` and waits for its ready line; a process that is not ready is killed. */
export async function launch(label: string, script: string, args: readonly string[], opts: LaunchOptions = {}): Promise<Launched> {
  const started = spawnProcess(label, script, args, opts);
  try {
    const addresses = await started.ready;
    return Object.assign(started, { addresses });
  } catch (err) {
    await started.kill();
    throw err;
  }
}
