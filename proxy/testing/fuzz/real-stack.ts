/**
 * The whole request path in this process, for the fuzz targets that send client traffic: apiserver-stub (its
 * simulated workers on a private 127.x network), extproc calling it, and the proxy (HTTP on port 0, and HTTPS with a
 * throw-away certificate) asking that extproc; plus a decoy address only clients name, and a record of what every
 * in-process HTTP server (so every worker) received.
 */
import { pino } from 'pino';
import { startStack, type TestStack } from '../../../apiserver-stub/testing/stack.js';
import { extprocConfigOf } from '../../../extproc/config.js';
import { startExtproc, type RunningExtproc } from '../../../extproc/server.js';
import { actorHost } from '../../../lib/testing/actors.js';
import { seedActorNames } from '../../../apiserver-stub/seed.js';
import { startTestProxy, type InProcessTestProxy } from '../proxy.js';
import { createTestCa, type TestCa } from '../throwaway-ca.js';
import { Decoy } from './decoy.js';
import { ServerRequests } from './server-requests.js';

export interface RealStack {
  readonly stub: TestStack;
  readonly extproc: RunningExtproc;
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
  const stub = await startStack({ workers: 4, workerCapacity: 8, actors: ACTORS, coldResumeMs: 2 });
  const extproc = await startExtproc(
    extprocConfigOf(['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', stub.stub.addresses.grpc, '--worker-port', String(stub.port)], {}),
    pino({ level: 'silent' }),
  );
  const proxy = await startTestProxy({
    mode: 'in-process',
    extproc: extproc.grpcAddress,
    args: [
      '--tls-listen', '127.0.0.1:0', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile,
      '--extproc-message-timeout-ms', '5000', '--connect-timeout-ms', '1000', '--route-timeout-ms', '5000',
      // An HTTP/2 connection whose session gave up (GOAWAY for an error) is closed after two of these (a PING
      // probe and its deadline): well within a case's deadline.
      '--keep-alive-timeout-ms', '2000',
      ...proxyArgs,
    ],
  });
  return {
    stub,
    extproc,
    proxy,
    plain: proxy.address,
    tls: proxy.addresses.tls as string,
    decoy,
    requests,
    workers: new Set(stub.stub.workerAddresses),
    actors: seedActorNames(ACTORS).map((name) => actorHost(name, stub.config.atespace)),
    async close() {
      await proxy.stop();
      await extproc.close();
      await stub.close();
      await decoy.close();
      await ca.remove();
      requests.stop();
    },
  };
}
