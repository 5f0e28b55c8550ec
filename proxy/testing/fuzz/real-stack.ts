/**
 * The whole request path in this process, for the fuzz targets that send client traffic: apiserver-stub (its
 * simulated workers on a private 127.x network), extproc calling it, and the proxy (HTTP on port 0, and HTTPS with a
 * throw-away certificate) asking that extproc; plus a decoy address only clients name, and a record of what every
 * in-process HTTP server (so every worker) received.
 */
import { actorHost } from '../../../lib/testing/actors.js';
import { seedActorNames } from '../../../apiserver-stub/seed.js';
import type { InProcessTestProxy } from '../proxy.js';
import { ATESPACE, startStack, type Stack } from '../stack.js';
import { createTestCa, type TestCa } from '../throwaway-ca.js';
import { Decoy } from './decoy.js';
import { forwardedProblems } from './forwarded-checks.js';
import { ServerRequests } from './server-requests.js';

export interface RealStack {
  readonly stack: Stack;
  readonly proxy: InProcessTestProxy;
  /** The proxy's plain (`http` + h2c) and HTTPS listeners, `host:port`. */
  readonly plain: string;
  readonly tls: string;
  readonly decoy: Decoy;
  readonly requests: ServerRequests;
  /** The stub's worker addresses (`ip:port`): the only upstreams the proxy may reach. */
  readonly workers: ReadonlySet<string>;
  /** The seeded actors' authorities. */
  readonly actors: readonly string[];
  close(): Promise<void>;
}

const ACTORS = 12;

export async function startRealStack(proxyArgs: readonly string[] = []): Promise<RealStack> {
  const requests = new ServerRequests();
  const decoy = await Decoy.start();
  const ca: TestCa = await createTestCa();
  const cert = await ca.issue('proxy');
  const stack = await startStack({
    stub: { workers: 4, capacity: 8, actors: ACTORS, coldResumeMs: 2 },
    proxyArgs: [
      '--tls-listen', '127.0.0.1:0', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile,
      '--extproc-message-timeout-ms', '5000', '--route-timeout-ms', '5000',
      // An HTTP/2 connection whose session gave up (GOAWAY for an error) is closed after two of these (a PING
      // probe and its deadline): well within a case's deadline.
      '--keep-alive-timeout-ms', '750',
      ...proxyArgs,
    ],
  });
  const proxy = stack.proxy;
  return {
    stack,
    proxy,
    plain: proxy.address,
    tls: proxy.addresses.tls as string,
    decoy,
    requests,
    workers: new Set(stack.stub.workerIps.map((ip) => `${ip}:${stack.stub.workerPort}`)),
    actors: seedActorNames(ACTORS).map((name) => actorHost(name, ATESPACE)),
    async close() {
      await stack.stop();
      await decoy.close();
      await ca.remove();
      requests.stop();
    },
  };
}

/**
 * What reached the workers since the last `stack.requests.take()`, checked (`forwarded-checks.ts`): the problems, and
 * each request counted as `to a worker`. Requests to the proxy's own listeners (it is an in-process HTTP server too)
 * are left out.
 */
export function workerRequestProblems(stack: RealStack, count: (key: string) => void): string[] {
  const own = new Set([stack.plain, stack.tls, stack.proxy.admin.replace('http://', '')]);
  const problems: string[] = [];
  for (const r of stack.requests.take()) {
    if (own.has(r.at)) continue;
    count('to a worker');
    problems.push(...forwardedProblems(r, { upstreams: stack.workers }, stack.decoy.address));
  }
  return problems;
}
