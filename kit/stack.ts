/**
 * The whole path in the test's own process, for an end-to-end check of a filter: apiserver-stub (a simulated
 * control plane whose workers run a demo app for every actor, on a private loopback network), extproc on it, and
 * the proxy on that extproc with the filters under test loaded as `--filter` modules — built JavaScript, as the
 * proxy will load them in production.
 *
 *     await using stack = await startTestStack({ filters: [new URL('./my-filter.js', import.meta.url)] });
 *     const answer = await stack.request('actor-000', { path: '/hello' });
 *
 * Every listener is on port 0 of loopback; the workers' addresses are 127.x.y.z, which Linux routes to loopback
 * (other systems need those addresses configured).
 */
import { Agent, request } from 'undici';
import { workerNet } from '../lib/loopback.js';
import { wiringFlags } from '../scripts/stack/wiring.js';
import { actorAuthority, TEST_ATESPACE } from './fake-request.js';
import { startExtprocInProcess, startProxyInProcess, startStubInProcess, type InProcessComponent, type InProcessProxy } from './in-process.js';

export interface TestStackOptions {
  /**
   * The filter modules, in chain order: paths (resolved against the working directory) or `file:` URLs, e.g.
   * `new URL('./my-filter.js', import.meta.url)` from a test built next to its filter.
   */
  readonly filters?: readonly (string | URL)[];
  /** More `actor-edge proxy` flags, after the kit's (a later flag wins), e.g. `['--actor-cache', 'off']`. */
  readonly proxyArgs?: readonly string[];
  /** How many demo actors the stub seeds: `actor-000`, `actor-001`, ... (default 20). */
  readonly actors?: number;
}

export interface TestRequest {
  readonly method?: string;
  /** Path and query (default `/`). The demo app's `?echo_headers=1` puts the headers it received in its answer. */
  readonly path?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
}

export interface TestAnswer {
  readonly status: number;
  /** The response headers (lower-case names). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** The body parsed as JSON (the demo app answers JSON: the actor, the method, the path, ...). */
  json<T = Record<string, unknown>>(): T;
}

export interface TestStack extends AsyncDisposable {
  /** The proxy's ingress as a base URL (`http://127.0.0.1:PORT`); requests need an actor's Host. */
  readonly ingress: string;
  /** The proxy's admin API as a base URL (`/stats`, `/metrics`, `POST /filters/reload`, ...). */
  readonly admin: string;
  /** The Host of `actor` that the proxy routes to it. */
  authority(actor: string): string;
  /** Sends one request to `actor` through the proxy (and the filters) and reads the whole answer. */
  request(actor: string, init?: TestRequest): Promise<TestAnswer>;
  /** The proxy's log lines so far, its access log included (`msg: 'access'`). */
  logs(): readonly Record<string, unknown>[];
  /** Stops the proxy, then extproc, then the stub. Safe to call again; `await using` calls it. */
  stop(): Promise<void>;
}

/** Short timeouts, so a test against a hop that is down fails in seconds rather than hanging. */
export const STACK_TIMEOUTS: readonly string[] = ['--extproc-message-timeout-ms', '3000', '--connect-timeout-ms', '1000', '--route-timeout-ms', '5000'];

const moduleArg = (m: string | URL): string => (m instanceof URL ? m.href : m);

/** Starts the stub, extproc and the proxy with `opts.filters`; a start that fails stops what it started, then throws. */
export async function startTestStack(opts: TestStackOptions = {}): Promise<TestStack> {
  const started: { stop(): Promise<void> }[] = [];
  const stopAll = async (): Promise<void> => {
    const errors: unknown[] = [];
    for (const c of started.splice(0).reverse()) await c.stop().catch((err: unknown) => void errors.push(err));
    if (errors.length > 0) throw new AggregateError(errors, 'stopping the test stack');
  };
  try {
    const { ipBase, port } = await workerNet();
    const stub: InProcessComponent = await startStubInProcess([
      '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--workers', '2', '--worker-ip-base', ipBase, '--worker-port', String(port),
      '--actors', String(opts.actors ?? 20), '--atespace', TEST_ATESPACE, '--resolve-latency-ms', '0', '--cold-resume-ms', '5',
    ]);
    started.push(stub);
    const apiserver = stub.addresses.grpc as string;
    const extproc = await startExtprocInProcess(['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', ...wiringFlags('extproc', { apiserver, workerPort: port })]);
    started.push(extproc);
    const filters = (opts.filters ?? []).flatMap((m) => ['--filter', moduleArg(m)]);
    const proxy: InProcessProxy = await startProxyInProcess([
      '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', ...STACK_TIMEOUTS,
      ...wiringFlags('proxy', { extproc: extproc.addresses.grpc as string }), ...filters, ...(opts.proxyArgs ?? []),
    ]);
    // One client for the stack, closed before the proxy stops (a drain would otherwise wait out its idle sockets).
    const client = new Agent({ keepAliveTimeout: 1000 });
    started.push(proxy, { stop: () => client.close() });
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => (stopping ??= stopAll());
    const ingress = `http://${proxy.running.ingress}`;
    return {
      ingress,
      admin: `http://${proxy.running.admin}`,
      authority: (actor) => actorAuthority(actor),
      async request(actor, init = {}) {
        const res = await request(`${ingress}${init.path ?? '/'}`, {
          method: (init.method ?? 'GET') as 'GET',
          headers: { host: actorAuthority(actor), ...init.headers },
          body: init.body ?? null,
          dispatcher: client,
        });
        const text = await res.body.text();
        return { status: res.statusCode, headers: res.headers, text, json: <T>() => JSON.parse(text) as T };
      },
      logs: () => proxy.logs(),
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (err) {
    await stopAll().catch(() => undefined); // the start's own error is the one to see
    throw err;
  }
}
