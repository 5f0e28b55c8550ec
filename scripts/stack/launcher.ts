/**
 * The local stack behind `npm start`: starts apiserver-stub, extproc and proxy as separate processes, one after
 * another, each once the previous one is ready; prints where to send requests; then waits. A signal (Ctrl-C,
 * SIGTERM, SIGHUP) stops the components in reverse order and exits 0; a component that exits on its own, or
 * does not become ready in time, is reported and stops the stack with exit code 1.
 */
import { StackChild, describeExit, type Exit } from './child.js';
import { formatLine, levelOf, type LineFormat } from './log-format.js';
import { STEPS, banner, type ReadyMap } from './plan.js';

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
}

type Outcome =
  | { kind: 'signal'; signal: NodeJS.Signals }
  | { kind: 'parent-gone'; pid: number }
  | { kind: 'died'; name: string; exit: Exit }
  | { kind: 'failed'; reason: string };

const SELF = 'stack';
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export async function runStack(opts: LauncherOptions): Promise<number> {
  const width = Math.max(SELF.length, ...STEPS.map((s) => s.name.length));
  const fmt: LineFormat = { ...opts.format, width };
  const say = (text: string): void => opts.write(formatLine(SELF, text, fmt));
  const children: StackChild[] = [];
  let stopping = false;
  let firstSignalAt = 0;

  // The first outcome wins; `settled` flips synchronously so the start loop never races it.
  let resolveOutcome!: (o: Outcome) => void;
  const outcome = new Promise<Outcome>((resolve) => {
    resolveOutcome = resolve;
  });
  let settled = false;
  const settle = (o: Outcome): void => {
    if (settled) return;
    settled = true;
    resolveOutcome(o);
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    if (!stopping && firstSignalAt === 0) {
      firstSignalAt = Date.now();
      settle({ kind: 'signal', signal });
      return;
    }
    // A repeated signal (not the echo of the first one, which npm and terminals can deliver twice) forces it.
    if (Date.now() - firstSignalAt > 1000) {
      say(`${signal} again: killing every component now`);
      for (const c of children) if (c.running) c.killGroup();
    }
  };
  for (const s of SIGNALS) process.on(s, onSignal);
  const killLeftovers = (): void => {
    for (const c of children) if (c.running) c.killGroup();
  };
  process.on('exit', killLeftovers);
  const parentWatch =
    opts.parentPid === undefined || opts.parentPid <= 1
      ? undefined
      : setInterval(() => {
          if (!alive(opts.parentPid as number)) settle({ kind: 'parent-gone', pid: opts.parentPid as number });
        }, 1000).unref();

  try {
    const ready: ReadyMap = {};
    for (const step of STEPS) {
      if (settled) break;
      let args: string[];
      try {
        args = step.args(ready);
      } catch (err) {
        settle({ kind: 'failed', reason: (err as Error).message });
        break;
      }
      const child = new StackChild({
        name: step.name,
        args,
        env: opts.env,
        onLine: (line) => {
          if ((levelOf(line) ?? Infinity) >= opts.minLevel) opts.write(formatLine(step.name, line, fmt));
        },
      });
      children.push(child);
      say(`started ${step.name} (pid ${child.pid})`);
      void child.exited.then((exit) => {
        if (!stopping) settle({ kind: 'died', name: step.name, exit });
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), opts.readyTimeoutMs);
      });
      const first = await Promise.race([child.ready.catch(() => 'not-ready' as const), outcome, timeout]);
      clearTimeout(timer);
      if (first === 'timeout') {
        settle({ kind: 'failed', reason: `${step.name} was not ready within ${opts.readyTimeoutMs} ms` });
        break;
      }
      if (typeof first === 'object' && !('kind' in first)) {
        ready[step.name] = first;
      } else {
        settle({ kind: 'failed', reason: `${step.name} exited before it was ready` });
        break;
      }
    }
    if (!settled) for (const line of banner(ready, opts.env).lines) say(line);

    const end = await outcome;
    stopping = true;
    let code = 0;
    switch (end.kind) {
      case 'signal':
        say(`${end.signal}: stopping`);
        break;
      case 'parent-gone':
        say(`the process that started the stack (pid ${end.pid}) is gone: stopping`);
        break;
      case 'died':
        say(`${end.name} exited unexpectedly (${describeExit(end.exit)}): stopping the stack`);
        code = 1;
        break;
      case 'failed':
        say(`${end.reason}: stopping the stack`);
        code = 1;
        break;
    }
    for (const child of [...children].reverse()) {
      if (!child.running) continue;
      const result = await child.stop(opts.graceMs);
      if (result.kind === 'killed') {
        say(`${child.name} did not stop within ${opts.graceMs} ms: killed`);
        code = 1;
      } else if (result.exit.code !== 0) {
        say(`${child.name} stopped with ${describeExit(result.exit)}`);
        code = 1;
      }
    }
    say(code === 0 ? 'stopped' : 'stopped (exit code 1)');
    return code;
  } finally {
    clearInterval(parentWatch);
    for (const s of SIGNALS) process.off(s, onSignal);
    killLeftovers();
    process.off('exit', killLeftovers);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
