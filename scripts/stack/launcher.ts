/**
 * The local stack behind `npm start`: starts apiserver-stub, extproc and proxy as separate processes, one after
 * another, each once the previous one is ready; prints where to send requests; then waits. A signal (Ctrl-C,
 * SIGTERM, SIGHUP) stops the components in reverse order and exits 0; a component that exits on its own, or
 * does not become ready in time, is reported and stops the stack with exit code 1.
 */
import { spawnComponent } from '../../cli/launch-component.js';
import { describeExit, NotReadyError, type Addresses, type Exit, type LaunchedProcess } from '../../lib/launch.js';
import { formatLine, levelOf, type LineFormat } from './log-format.js';
import { STEPS, banner, filterChainOf, type ComponentName, type ReadyMap, type Step } from './plan.js';
import type { LoadedFilter } from '../../proxy/chain/loaded-filters.js';

export interface LauncherOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Writes one line of output (the launcher's own and the components'). */
  readonly write: (line: string) => void;
  readonly readyTimeoutMs: number;
  /** How long each component may take to stop after SIGTERM before its process group is killed. */
  readonly graceMs: number;
  readonly format: Omit<LineFormat, 'width'>;
  /** Component log lines below this pino level are not shown (the components themselves log at info or lower). */
  readonly minLevel: number;
  /**
   * Stop the stack when the process that started the launcher goes away (checked every second). `npm start`
   * runs the launcher under `sh -c`; a SIGTERM to npm ends that shell without passing the signal on.
   */
  readonly parentPid?: number;
  /** Lines the launcher says before it starts anything (e.g. that TLS is off). */
  readonly notices?: readonly string[];
  /** Flags added to a component's wiring (e.g. the proxy's `--filter`s). */
  readonly args?: Partial<Record<ComponentName, readonly string[]>>;
}

/** Why the stack stops. */
type Outcome =
  | { kind: 'signal'; signal: NodeJS.Signals }
  | { kind: 'parent-gone'; pid: number }
  | { kind: 'died'; name: string; exit: Exit; why: string | undefined }
  | { kind: 'failed'; reason: string };

/** How the wait for one component's ready line ended. */
type StepResult = { kind: 'ready'; addresses: Addresses } | { kind: 'not-ready'; reason: string } | { kind: 'stack-stopping' };

const SELF = 'stack';
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
/** Output lines kept per component, for nothing but a short memory: the lines are shown as they arrive. */
const KEEP_LINES = 20;

export async function runStack(opts: LauncherOptions): Promise<number> {
  const run = new StackRun(opts);
  const unwatch = run.watch();
  try {
    await run.startAll();
    return await run.stopAll(await run.outcome);
  } finally {
    unwatch();
  }
}

class StackRun {
  /** The first outcome wins; `settled` flips synchronously so the start loop never races it. */
  readonly outcome: Promise<Outcome>;
  private resolveOutcome!: (o: Outcome) => void;
  private settled = false;
  private stopping = false;
  private firstSignalAt = 0;
  private readonly children: LaunchedProcess[] = [];
  /** The proxy's user filters, from its start-up line, for the banner. */
  private filters: readonly LoadedFilter[] | undefined;
  private readonly fmt: LineFormat;

  constructor(private readonly opts: LauncherOptions) {
    this.fmt = { ...opts.format, width: Math.max(SELF.length, ...STEPS.map((s) => s.name.length)) };
    this.outcome = new Promise<Outcome>((resolve) => {
      this.resolveOutcome = resolve;
    });
  }

  /** Watches signals, the parent process and this process's exit; returns what undoes that. */
  watch(): () => void {
    const onSignal = (signal: NodeJS.Signals): void => this.onSignal(signal);
    const killLeftovers = (): void => this.killAll();
    for (const s of SIGNALS) process.on(s, onSignal);
    process.on('exit', killLeftovers);
    const parentWatch = this.watchParent();
    return () => {
      clearInterval(parentWatch);
      for (const s of SIGNALS) process.off(s, onSignal);
      killLeftovers();
      process.off('exit', killLeftovers);
    };
  }

  /** Starts every component in order, each once the previous one is ready; prints the banner if all are. */
  async startAll(): Promise<void> {
    for (const line of this.opts.notices ?? []) this.say(line);
    const ready: ReadyMap = {};
    for (const step of STEPS) {
      if (this.settled) return;
      const addresses = await this.startStep(step, ready);
      if (addresses === undefined) return;
      ready[step.name] = addresses;
    }
    if (!this.settled) for (const line of banner(ready, this.opts.env, this.filters).lines) this.say(line);
  }

  /** Says why the stack stops, stops the components in reverse start order; resolves with the exit code. */
  async stopAll(end: Outcome): Promise<number> {
    this.stopping = true;
    let code = this.announce(end);
    for (const child of [...this.children].reverse()) {
      if (!child.running) continue;
      if (!(await this.stopChild(child))) code = 1;
    }
    this.say(code === 0 ? 'stopped' : 'stopped (exit code 1)');
    return code;
  }

  private say(text: string): void {
    this.opts.write(formatLine(SELF, text, this.fmt));
  }

  private settle(o: Outcome): void {
    if (this.settled) return;
    this.settled = true;
    this.resolveOutcome(o);
  }

  private onSignal(signal: NodeJS.Signals): void {
    if (!this.stopping && this.firstSignalAt === 0) {
      this.firstSignalAt = Date.now();
      this.settle({ kind: 'signal', signal });
      return;
    }
    // A repeated signal (not the echo of the first one, which npm and terminals can deliver twice) forces it.
    if (Date.now() - this.firstSignalAt > 1000) {
      this.say(`${signal} again: killing every component now`);
      this.killAll();
    }
  }

  private killAll(): void {
    for (const c of this.children) c.killGroup();
  }

  private watchParent(): NodeJS.Timeout | undefined {
    const pid = this.opts.parentPid;
    if (pid === undefined || pid <= 1) return undefined;
    return setInterval(() => {
      if (!alive(pid)) this.settle({ kind: 'parent-gone', pid });
    }, 1000).unref();
  }

  /** Starts one component and waits for its ready line; undefined (and the outcome settled) if it never comes. */
  private async startStep(step: Step, ready: ReadyMap): Promise<Addresses | undefined> {
    let args: string[];
    try {
      args = [...step.args(ready), ...(this.opts.args?.[step.name] ?? [])];
    } catch (err) {
      this.settle({ kind: 'failed', reason: (err as Error).message });
      return undefined;
    }
    const child = this.spawn(step, args);
    const result = await Promise.race<StepResult>([
      child.ready.then(
        (addresses) => ({ kind: 'ready', addresses }),
        (err: unknown) => ({ kind: 'not-ready', reason: this.notReadyReason(step, err) }),
      ),
      this.outcome.then(() => ({ kind: 'stack-stopping' })),
    ]);
    if (result.kind === 'ready') return result.addresses;
    this.settle({ kind: 'failed', reason: result.kind === 'not-ready' ? result.reason : `${step.name} exited before it was ready` });
    return undefined;
  }

  private notReadyReason(step: Step, err: unknown): string {
    if (err instanceof NotReadyError && err.reason.kind === 'timeout') return `${step.name} was not ready within ${this.opts.readyTimeoutMs} ms`;
    return `${step.name} exited before it was ready`;
  }

  private spawn(step: Step, args: string[]): LaunchedProcess {
    const child = spawnComponent(step.name, args, {
      env: this.opts.env,
      readyTimeoutMs: this.opts.readyTimeoutMs,
      keepLines: KEEP_LINES,
      onLine: (line) => {
        if (step.name === 'proxy') this.filters = filterChainOf(line) ?? this.filters;
        if ((levelOf(line) ?? Infinity) >= this.opts.minLevel) this.opts.write(formatLine(step.name, line, this.fmt));
      },
    });
    this.children.push(child);
    this.say(`started ${step.name} (pid ${child.pid})`);
    void child.exited.then(() => {
      if (!this.stopping) this.settle({ kind: 'died', name: step.name, exit: child.exit as Exit, why: lastWords(step.name, child.lines) });
    });
    return child;
  }

  /** Says why the stack stops; resolves with the exit code that reason implies. */
  private announce(end: Outcome): number {
    switch (end.kind) {
      case 'signal':
        this.say(`${end.signal}: stopping`);
        return 0;
      case 'parent-gone':
        this.say(`the process that started the stack (pid ${end.pid}) is gone: stopping`);
        return 0;
      case 'died':
        this.say(`${end.name} exited unexpectedly (${describeExit(end.exit)})${end.why === undefined ? '' : `: ${end.why}`}: stopping the stack`);
        return 1;
      case 'failed':
        this.say(`${end.reason}: stopping the stack`);
        return 1;
    }
  }

  /** SIGTERM, then the group's SIGKILL after the grace; false (and said why) unless it exited cleanly. */
  private async stopChild(child: LaunchedProcess): Promise<boolean> {
    const result = await child.terminate(this.opts.graceMs);
    if (result.kind === 'killed') {
      this.say(`${child.label} did not stop within ${this.opts.graceMs} ms: killed`);
      return false;
    }
    if (result.exit.code !== 0) {
      this.say(`${child.label} stopped with ${describeExit(result.exit)}`);
      return false;
    }
    return true;
  }
}

/**
 * What a component said last when it stopped on a start-up error (`cli/main.ts` writes `actor-edge <name>: reason`
 * or `actor-edge: reason`), so the launcher's own last line says why, e.g. which port is taken.
 */
function lastWords(name: string, lines: readonly string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = new RegExp(`^actor-edge(?: ${name})?: (.*)$`).exec(lines[i] ?? '');
    if (m !== null) return m[1];
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
