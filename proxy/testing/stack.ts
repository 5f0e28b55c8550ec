/**
 * End-to-end helpers for the stack tests: a real apiserver-stub (with its workers on a private loopback network)
 * and extproc — in the test's own process by default, or as processes (`mode: 'process'`) for a test about
 * processes (signals, kills, exit codes) — the whole stack of stub, extproc and proxy in one call (`startStack`),
 * and small clients for the ingress and the admin APIs.
 */
import { request } from 'undici';
import { startComponent, type InProcessComponent, type RunningComponent } from '../../lib/testing/component.js';
import { startStubInProcess } from '../../apiserver-stub/testing/in-process.js';
import { startExtprocInProcess } from '../../extproc/testing/in-process.js';
import { wiringFlags } from '../../scripts/stack/wiring.js';
import { STACK_TIMEOUTS } from '../../kit/stack.js';
import { FileClient } from './file-client.js';
import { startTestProxy, type InProcessTestProxy, type ProxyHandle, type TestProxy } from './proxy.js';
import { workerNet } from '../../lib/loopback.js';
import { actorHost, ATESPACE } from '../../lib/testing/actors.js';
import type { StatsDocument } from '../admin/stats-document.js';
import { waitFor } from '../../lib/testing/wait.js';

export { ATESPACE };

/** `actor-000`, `actor-001`, ... as the stub seeds them. */
export function actorName(i: number): string {
  return `actor-${String(i).padStart(3, '0')}`;
}

/** The authority of `actor` in the seeded atespace. */
export function hostOf(actor: string, port?: number): string {
  return actorHost(actor, ATESPACE, port);
}

/** `in-process` (default): in the test's own process; `process`: its own process, through the CLI. */
export type ComponentMode = 'in-process' | 'process';

export interface StubOptions {
  readonly mode?: ComponentMode;
  readonly workers?: number;
  readonly actors?: number;
  readonly capacity?: number;
  readonly coldResumeMs?: number;
  /** More flags, after the defaults (a later flag wins), e.g. its TLS. */
  readonly args?: readonly string[];
}

export interface Stub<C extends InProcessComponent | RunningComponent = InProcessComponent | RunningComponent> {
  readonly component: C;
  readonly grpc: string;
  readonly admin: string;
  /** Worker IPs in order (the Nth is base + N - 1). */
  readonly workerIps: readonly string[];
  readonly workerPort: number;
}

export function startStub(opts: StubOptions & { readonly mode: 'process' }): Promise<Stub<RunningComponent>>;
export function startStub(opts?: StubOptions): Promise<Stub<InProcessComponent>>;
export async function startStub(opts: StubOptions = {}): Promise<Stub> {
  const { ipBase, port } = await workerNet();
  const workers = opts.workers ?? 6;
  const args = [
    '--listen', '127.0.0.1:0',
    '--admin', '127.0.0.1:0',
    '--workers', String(workers),
    '--worker-ip-base', ipBase,
    '--worker-port', String(port),
    '--worker-capacity', String(opts.capacity ?? 4),
    '--actors', String(opts.actors ?? 20),
    '--atespace', ATESPACE,
    '--resolve-latency-ms', '0',
    '--cold-resume-ms', String(opts.coldResumeMs ?? 5),
    ...(opts.args ?? []),
  ];
  const component = opts.mode === 'process' ? await startComponent('apiserver-stub', args) : await startStubInProcess(args);
  const [a, b, c] = ipBase.split('.');
  const workerIps = Array.from({ length: workers }, (_, i) => `${a}.${b}.${c}.${i + 1}`);
  return {
    component,
    grpc: component.addresses.grpc as string,
    admin: `http://${component.addresses.admin}`,
    workerIps,
    workerPort: port,
  };
}

export interface Extproc<C extends InProcessComponent | RunningComponent = InProcessComponent | RunningComponent> {
  readonly component: C;
  readonly grpc: string;
  readonly admin: string;
}

/**
 * `env`: its environment (in-process: the only one its config reads; a process: added to the test's), e.g. the
 * `OTEL_*` variables of a test's trace receiver.
 */
export function startExtproc(stub: Stub, args: string[] | undefined, listen: string | undefined, env: NodeJS.ProcessEnv | undefined, mode: 'process'): Promise<Extproc<RunningComponent>>;
export function startExtproc(stub: Stub, args?: string[], listen?: string, env?: NodeJS.ProcessEnv, mode?: 'in-process'): Promise<Extproc<InProcessComponent>>;
export async function startExtproc(stub: Stub, args: string[] = [], listen = '127.0.0.1:0', env?: NodeJS.ProcessEnv, mode: ComponentMode = 'in-process'): Promise<Extproc> {
  const flags = ['--listen', listen, '--admin', '127.0.0.1:0', ...wiringFlags('extproc', { apiserver: stub.grpc, workerPort: stub.workerPort }), ...args];
  const component = mode === 'process' ? await startComponent('extproc', flags, env === undefined ? {} : { env }) : await startExtprocInProcess(flags, env);
  return { component, grpc: component.addresses.grpc as string, admin: `http://${component.addresses.admin}` };
}

/** The timeouts the stack tests run their proxies with: the test kit's (short, so a dead hop fails a test fast). */
export { STACK_TIMEOUTS };

export interface StackOptions {
  /** The proxy's: `in-process` (default) or `process`. The stub's is `stub.mode`; extproc runs in this process. */
  readonly mode?: ComponentMode;
  readonly stub?: StubOptions;
  /** extproc's flags, after the defaults. */
  readonly extprocArgs?: readonly string[];
  /** extproc's gRPC listener (default `127.0.0.1:0`), for a test that starts it again on the same port. */
  readonly extprocListen?: string;
  /** extproc's environment (the only one its config reads), e.g. a trace receiver's `OTEL_*`. */
  readonly extprocEnv?: NodeJS.ProcessEnv;
  /** The proxy's flags, after `--extproc` and `STACK_TIMEOUTS` (a later flag wins). */
  readonly proxyArgs?: readonly string[];
  /** The proxy's environment (in-process, the only one its config reads). */
  readonly proxyEnv?: NodeJS.ProcessEnv;
}

/** A stub, an extproc on it and a proxy on that extproc; `stop()` (or `await using`) stops them, the proxies first. */
export interface Stack<P extends ProxyHandle = InProcessTestProxy> extends AsyncDisposable {
  readonly stub: Stub;
  readonly extproc: Extproc;
  readonly proxy: P;
  /** Starts another proxy (same mode) on this extproc, `args` after `STACK_TIMEOUTS`; `stop()` stops it too. */
  addProxy(args?: readonly string[], env?: NodeJS.ProcessEnv): Promise<P>;
  /** Stops the proxies (together), then extproc, then the stub. Safe to call again. */
  stop(): Promise<void>;
}

/**
 * Starts the stub, extproc on it, and a proxy on that extproc with `STACK_TIMEOUTS` and `proxyArgs`. A start that
 * fails stops what it had started, then throws.
 */
export function startStack(opts: StackOptions & { readonly mode: 'process' }): Promise<Stack<TestProxy>>;
export function startStack(opts?: StackOptions & { readonly mode?: 'in-process' }): Promise<Stack<InProcessTestProxy>>;
export async function startStack(opts: StackOptions = {}): Promise<Stack<ProxyHandle>> {
  // Stopped in reverse order of their layers: the proxies (together), extproc, the stub.
  const proxies: ProxyHandle[] = [];
  const below: { stop(): Promise<unknown> }[] = [];
  const stopAll = async (): Promise<void> => {
    const errors: unknown[] = [];
    const failed = (err: unknown): void => void errors.push(err);
    await Promise.all(proxies.splice(0).map((p) => p.stop().catch(failed)));
    for (const c of below.splice(0).reverse()) await c.stop().catch(failed);
    if (errors.length > 0) throw new AggregateError(errors, 'stopping the stack');
  };
  const proxyOf = async (extproc: Extproc, args: readonly string[] = [], env?: NodeJS.ProcessEnv): Promise<ProxyHandle> => {
    const common = { extproc: extproc.grpc, args: [...STACK_TIMEOUTS, ...args], ...(env === undefined ? {} : { env }) };
    const proxy = opts.mode === 'process' ? await startTestProxy(common) : await startTestProxy({ ...common, mode: 'in-process' });
    proxies.push(proxy);
    return proxy;
  };
  try {
    const stub: Stub = await startStub(opts.stub);
    below.push(stub.component);
    const extproc: Extproc = await startExtproc(stub, [...(opts.extprocArgs ?? [])], opts.extprocListen, opts.extprocEnv);
    below.push(extproc.component);
    const proxy = await proxyOf(extproc, opts.proxyArgs, opts.proxyEnv);
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => (stopping ??= stopAll());
    return { stub, extproc, proxy, addProxy: (args, env) => proxyOf(extproc, args, env), stop, [Symbol.asyncDispose]: stop };
  } catch (err) {
    await stopAll().catch(() => undefined); // the start's own error is the one to see
    throw err;
  }
}

/**
 * One keep-alive client per test file; close it first in after() (a drain waits out its idle grace for it). A file
 * that shares the process with others leaves the next one a fresh client (`file-client.ts`).
 */
export const client = new FileClient();

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The demo app's JSON answer, when the actor answered 200. */
  readonly app: DemoAnswer | undefined;
}

export interface DemoAnswer {
  readonly atespace: string;
  readonly actor: string;
  readonly worker: string;
  readonly method: string;
  readonly path: string;
  readonly seq: number;
  readonly bodyLength: number;
  readonly bodySha256: string;
  readonly requestId: string | null;
  readonly headers?: Record<string, string>;
}

export interface SendOptions {
  readonly method?: string;
  readonly path?: string;
  readonly host?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  readonly requestId?: string;
}

/** Sends one request through the proxy's ingress to `actor` (or to `opts.host`). */
export async function send(proxy: ProxyHandle, actor: string, opts: SendOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { host: opts.host ?? hostOf(actor), ...opts.headers };
  if (opts.requestId !== undefined) headers['x-request-id'] = opts.requestId;
  const res = await request(`${proxy.ingress}${opts.path ?? '/'}`, {
    method: (opts.method ?? 'GET') as 'GET',
    headers,
    body: opts.body ?? null,
    dispatcher: client,
  });
  const text = await res.body.text();
  let app: DemoAnswer | undefined;
  if (res.statusCode === 200 && String(res.headers['content-type'] ?? '').startsWith('application/json')) {
    app = JSON.parse(text) as DemoAnswer;
  }
  return { status: res.statusCode, headers: res.headers, text, app };
}

export async function adminJson<T = Record<string, unknown>>(base: string, path: string, method = 'GET', body?: unknown): Promise<T> {
  const res = await request(`${base}${path}`, {
    method: method as 'GET',
    dispatcher: client,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 400) throw new Error(`${method} ${base}${path}: ${res.statusCode} ${text}`);
  return (text ? JSON.parse(text) : {}) as T;
}

/** The proxy's `/stats` document (its type derives from the counters' declarations). */
export type ProxyStats = StatsDocument;

export interface StubStats {
  rpc: Record<string, Record<string, number>>;
  workers: Record<string, { alive: boolean; requests: number; misdirected: number; actors: string[] }>;
  deliveries: { total: number; duplicates: number };
}

export interface ExtprocStats {
  streams: { total: number; active: number };
}

export interface StubActor {
  status: string;
  workerIp: string | null;
  requestIds: string[];
}

export const proxyStats = (p: ProxyHandle): Promise<ProxyStats> => adminJson<ProxyStats>(p.admin, '/stats');
export const stubStats = (s: Stub): Promise<StubStats> => adminJson<StubStats>(s.admin, '/stats');
export const extprocStats = (e: Extproc): Promise<ExtprocStats> => adminJson<ExtprocStats>(e.admin, '/stats');
export const stubActor = (s: Stub, actor: string): Promise<StubActor> => adminJson<StubActor>(s.admin, `/actors/${ATESPACE}/${actor}`);

/** ResumeActor calls the stub answered since its last reset (any code). */
export async function resumeCalls(s: Stub): Promise<number> {
  const rpc = (await stubStats(s)).rpc.ResumeActor ?? {};
  return Object.values(rpc).reduce((a, b) => a + b, 0);
}

/** Zeros the counters of every admin given. */
export async function resetStats(...admins: string[]): Promise<void> {
  await Promise.all(admins.map((a) => adminJson(a, '/stats/reset', 'POST')));
}

/** The proxy's access-log line for one request id (waits for it: log lines arrive after the response). */
export async function accessLine(p: ProxyHandle, requestId: string): Promise<Record<string, unknown>> {
  const find = (): Record<string, unknown> | undefined => p.logs().find((l) => l.requestId === requestId && l.msg === 'access');
  await waitFor(() => find() !== undefined, 5000, `the access-log line of ${requestId}`);
  return find() as Record<string, unknown>;
}
