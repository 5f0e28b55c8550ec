/**
 * The stub alone, in-process, for its own unit tests: the config as an object (fields typed, no flag parsing) and a
 * control-API client. A stack of stub, extproc and proxy is `proxy/testing/stack.ts`, on the same in-process start.
 */
import { createLogger } from '../../lib/logger.js';
import { workerNet } from '../../lib/loopback.js';
import { SUFFIX } from '../../lib/testing/actors.js';
import type { StubConfig } from '../config.js';
import { NO_EGRESS_SEED } from '../egress-seed.js';
import { startApiserverStub, type RunningStub } from '../stub.js';
import { controlClient, type ControlTestClient } from './clients.js';

export interface TestStub {
  readonly stub: RunningStub;
  readonly config: StubConfig;
  readonly client: ControlTestClient;
  readonly admin: string;
  readonly port: number;
  /** In-process worker IPs. */
  readonly workers: readonly string[];
  close(): Promise<void>;
}

export async function startTestStub(overrides: Partial<StubConfig> = {}): Promise<TestStub> {
  const net = await workerNet();
  const config: StubConfig = Object.freeze({
    listen: { host: '127.0.0.1', port: 0 },
    attachListen: undefined,
    admin: { host: '127.0.0.1', port: 0 },
    adminToken: undefined,
    workers: 4,
    workerIpBase: net.ipBase,
    workerPort: net.port,
    workerCapacity: 1,
    actors: 10,
    destinations: [],
    atespace: 'demo',
    egressSeed: NO_EGRESS_SEED,
    actorCaDir: undefined,
    resolveLatencyMs: 0,
    readLatencyMs: 0,
    coldResumeMs: 10,
    autoCreate: false,
    actorSuffix: SUFFIX,
    tls: undefined,
    workerTls: undefined,
    certExpiryWarningHours: 168,
    ...overrides,
  });
  const stub = await startApiserverStub(config, createLogger('apiserver-stub', process.env.TEST_LOG_LEVEL ?? 'silent'));
  const client = controlClient(stub.addresses.grpc);
  return {
    stub,
    config,
    client,
    admin: stub.addresses.admin,
    port: config.workerPort,
    workers: stub.agents.map((a) => a.ip),
    async close() {
      client.close();
      await stub.close();
    },
  };
}
