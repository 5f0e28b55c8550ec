/**
 * One component of the local stack as a child process: `node --import exit-with-parent.js dist/lib/cli.js
 * <component> [flags]`, in its own process group (so a terminal's Ctrl-C reaches only the launcher, which then
 * stops the components in order). Splits its output into lines, and resolves `ready` with the addresses from
 * the component's "ready" log line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { readyAddresses, splitLines } from '../../lib/ready-line.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const CLI = path.resolve(here, '../../lib/cli.js');
const EXIT_WITH_PARENT = pathToFileURL(path.resolve(here, 'exit-with-parent.js')).href;

export type Addresses = Readonly<Record<string, string>>;

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export type StopResult = { kind: 'exited'; exit: Exit } | { kind: 'killed'; exit: Exit };

export interface ChildSpec {
  readonly name: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Called with every line the component writes to stdout or stderr. */
  readonly onLine: (line: string) => void;
}

export class StackChild {
  readonly name: string;
  readonly pid: number;
  readonly ready: Promise<Addresses>;
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;
  private exit: Exit | undefined;

  constructor(spec: ChildSpec) {
    this.name = spec.name;
    this.child = spawn(process.execPath, ['--import', EXIT_WITH_PARENT, CLI, spec.name, ...spec.args], {
      env: spec.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    if (this.child.pid === undefined) throw new Error(`could not start ${spec.name}`);
    this.pid = this.child.pid;
    // The pipe stays open, unwritten, for the component's whole life: its closing means "the launcher is gone".
    this.child.stdin?.on('error', () => undefined);

    this.exited = new Promise<Exit>((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
    this.ready = new Promise<Addresses>((resolve, reject) => {
      const onLine = (line: string): void => {
        spec.onLine(line);
        const addresses = readyAddresses(line);
        if (addresses) resolve(addresses);
      };
      splitLines(this.child.stdout!, onLine);
      splitLines(this.child.stderr!, onLine);
      void this.exited.then((e) => reject(new Error(`${spec.name} exited before it was ready (${describeExit(e)})`)));
    });
    this.ready.catch(() => undefined);
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** SIGTERM, then SIGKILL to the whole process group after `graceMs`. */
  async stop(graceMs: number): Promise<StopResult> {
    if (this.exit) return { kind: 'exited', exit: this.exit };
    this.signal('SIGTERM');
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      this.killGroup();
    }, graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return { kind: killed ? 'killed' : 'exited', exit };
  }

  /** SIGKILL to the component's process group (it and anything it started). */
  killGroup(): void {
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
}

export function describeExit(e: Exit): string {
  return e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
}

