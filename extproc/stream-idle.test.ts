/**
 * extproc (in the test's process, from its flags): a Process stream whose data plane never half-closes is
 * ended by the server's idle timeout (DEADLINE_EXCEEDED, counted), while a stream that is answered and
 * half-closed ends OK as before.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as grpc from '@grpc/grpc-js';
import type { InProcessComponent } from '../lib/testing/component.js';
import { startStubInProcess } from '../apiserver-stub/testing/in-process.js';
import { startExtprocInProcess } from './testing/in-process.js';
import { workerNet } from '../lib/loopback.js';
import { waitFor } from '../lib/testing/wait.js';
import { EnvoyLikeClient } from './testing/envoy-like-client.js';

const DEADLINE_EXCEEDED = 4;
const OK = 0;

let stub: InProcessComponent;
let extproc: InProcessComponent;
let client: EnvoyLikeClient;

async function stats(): Promise<{ streams: { total: number; active: number; idleTimeouts: number } }> {
  const res = await fetch(`http://${extproc.addresses.admin}/stats`);
  return (await res.json()) as { streams: { total: number; active: number; idleTimeouts: number } };
}

/** The stream's final status, or a failure once `ms` passed without one. */
function statusWithin(status: Promise<grpc.StatusObject>, ms: number): Promise<grpc.StatusObject> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the stream did not end within ${ms} ms`)), ms);
  });
  return Promise.race([status, deadline]).finally(() => clearTimeout(timer));
}

describe('stream-idle', () => {
  before(async () => {
    const net = await workerNet();
    stub = await startStubInProcess([
      '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--workers', '1', '--worker-ip-base', net.ipBase,
      '--worker-port', String(net.port), '--actors', '1', '--atespace', 'demo', '--resolve-latency-ms', '0',
    ]);
    extproc = await startExtprocInProcess([
      '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', stub.addresses.grpc!, '--worker-port', String(net.port),
      '--stream-idle-timeout-ms', '300',
    ]);
    client = new EnvoyLikeClient(extproc.addresses.grpc!);
  });

  after(async () => {
    client?.close();
    await extproc?.stop();
    await stub?.stop();
  });

  test('a stream that is answered but never half-closed ends with DEADLINE_EXCEEDED and is counted', async () => {
    const { call, reader, status } = client.open();
    call.write(EnvoyLikeClient.requestHeadersMessage({ authority: 'example.com' }));
    const answer = await reader.next();
    assert.equal(answer.response, 'immediate_response', 'a host that names no actor is answered at once');
    const end = await statusWithin(status, 10_000);
    assert.equal(end.code, DEADLINE_EXCEEDED);
    await waitFor(async () => (await stats()).streams.active === 0, 5000, 'no stream left open');
    assert.equal((await stats()).streams.idleTimeouts, 1);
  });

  test('a stream on which nothing is ever sent ends the same way', async () => {
    const before = (await stats()).streams.idleTimeouts;
    const { status } = client.open();
    const end = await statusWithin(status, 10_000);
    assert.equal(end.code, DEADLINE_EXCEEDED);
    assert.equal((await stats()).streams.idleTimeouts, before + 1);
  });

  test('a stream that half-closes after its answer ends OK and is not counted', async () => {
    const before = (await stats()).streams.idleTimeouts;
    const { call, reader, status } = client.open();
    call.write(EnvoyLikeClient.requestHeadersMessage({ authority: 'example.com' }));
    await reader.next();
    call.end();
    const end = await statusWithin(status, 10_000);
    assert.equal(end.code, OK);
    assert.equal((await stats()).streams.idleTimeouts, before);
  });
});
