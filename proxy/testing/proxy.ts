/**
 * The one way tests start a proxy: `actor-edge proxy` as its own process (the default: for a test about processes —
 * signals, exit codes, `--workers N`), or the same proxy in the test's own process (`mode: 'in-process'`: every other
 * test, and one that hands it stages of its own; no module loading of its own to pay). Both take the same flags
 * on top of the same defaults — every listener on port 0 on loopback, and otherwise the production defaults:
 * the actor cache is on unless a test says `--actor-cache off`; one exception: a client's `x-request-id` is kept
 * (`--request-id-trusted on`), since tests find their requests' access-log lines by the ids they sent (the
 * default, replacing them, has tests of its own) — and both answer with the same handle: the addresses, the JSON
 * log lines so far (the access log included), and `stop()`.
 */
import { wiringFlags } from '../../scripts/stack/wiring.js';
import { startComponent, type RunningComponent } from '../../lib/testing/component.js';
import type { AssembleStages, ProcessOptions, RunningProxy } from '../proxy-process.js';
import { assembleStages } from '../stages/assemble.js';
import { startProxyInProcess } from '../../kit/in-process.js';

export interface TestProxyOptions {
  /** The ext_proc server (`--extproc HOST:PORT`). */
  readonly extproc?: string;
  /** More flags, after the defaults (a later flag wins). */
  readonly args?: readonly string[];
  /** `process` (default): its own process; `in-process`: this process (stages of the test's own allowed). */
  readonly mode?: 'process' | 'in-process';
  /** In-process only: the stages (default: the production assembly). */
  readonly assemble?: AssembleStages;
  /** In-process only: the overload monitors' readings and sampling interval (a test drives the overload state). */
  readonly overload?: ProcessOptions['overload'];
  /** Its environment: a process's on top of this one's; in-process, the only environment its config reads (`OTEL_*`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Process only: how long it may take to be ready. */
  readonly readyTimeoutMs?: number;
}

/** What every test proxy offers, in either mode. */
export interface ProxyHandle {
  /** The ingress as a base URL (`http://host:port`). */
  readonly ingress: string;
  /** The ingress's `host:port` (for raw sockets and h2 sessions). */
  readonly address: string;
  /** The admin API as a base URL. */
  readonly admin: string;
  /** Every address of the ready line (`tls`, `connect`, `connectTls`, `egress` when those listeners are on). */
  readonly addresses: Readonly<Record<string, string | undefined>>;
  /** The JSON log lines so far. */
  logs(): Record<string, unknown>[];
  /** Drains and stops it (SIGTERM for a process). */
  stop(): Promise<void>;
}

/** A proxy in its own process. */
export interface TestProxy extends ProxyHandle {
  /** The process: signals, exit code, raw output. */
  readonly component: RunningComponent;
}

/** A proxy in the test's process. */
export interface InProcessTestProxy extends ProxyHandle {
  /** The running proxy: reload, stopAccepting. */
  readonly running: RunningProxy;
}

const DEFAULTS = ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--request-id-trusted', 'on'];

export function startTestProxy(opts: TestProxyOptions & { readonly mode: 'in-process' }): Promise<InProcessTestProxy>;
export function startTestProxy(opts?: TestProxyOptions & { readonly mode?: 'process' }): Promise<TestProxy>;
export async function startTestProxy(opts: TestProxyOptions = {}): Promise<TestProxy | InProcessTestProxy> {
  const args = [...DEFAULTS, ...(opts.extproc === undefined ? [] : wiringFlags('proxy', { extproc: opts.extproc })), ...(opts.args ?? [])];
  // In the test's process the overload monitors are off unless the test sets them (`startProxyInProcess`;
  // overload.test.ts does).
  if (opts.mode === 'in-process') return startInProcess(args, opts.assemble ?? assembleStages, opts.env ?? {}, opts.overload);
  const component = await startComponent('proxy', args, {
    ...(opts.env === undefined ? {} : { env: opts.env }),
    ...(opts.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: opts.readyTimeoutMs }),
  });
  const a = component.addresses;
  return {
    ingress: `http://${a.ingress}`,
    address: a.ingress as string,
    admin: `http://${a.admin}`,
    addresses: a,
    logs: () => component.logs(),
    stop: async () => {
      await component.stop();
    },
    component,
  };
}

/** The test kit's in-process proxy, with the handle every test proxy offers. */
async function startInProcess(args: string[], assemble: AssembleStages, env: NodeJS.ProcessEnv, overload: ProcessOptions['overload']): Promise<InProcessTestProxy> {
  const { running, logs, stop } = await startProxyInProcess(args, env, { assemble, ...(overload === undefined ? {} : { overload }) });
  const addresses = { ingress: running.ingress, admin: running.admin, tls: running.tls, connect: running.connect, connectTls: running.connectTls, egress: running.egress };
  return {
    ingress: `http://${running.ingress}`,
    address: running.ingress,
    admin: `http://${running.admin}`,
    addresses,
    logs,
    stop,
    running,
  };
}
