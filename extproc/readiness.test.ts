/**
 * extproc's readiness follows its control plane: not ready (with the reason) while the control plane cannot be
 * reached or says it is not serving, ready again by itself once it answers; its own gRPC health service says the
 * same for the ext_proc service, while the server as a whole stays SERVING (a data plane checking the server rides
 * out a control-plane outage).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { readFlags } from '../lib/flags.js';
import { freePort } from '../lib/loopback.js';
import { waitFor } from '../lib/testing/wait.js';
import { checkHealth, createHealthClient, HealthServer, type ServingStatus } from '../lib/grpc-health.js';
import { buildConfig, EXTPROC_FLAGS } from './config.js';
import { startExtproc, type RunningExtproc } from './server.js';

const cleanups: (() => Promise<void> | void)[] = [];
describe('readiness', () => {
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  async function readyOf(extproc: RunningExtproc): Promise<{ status: number; body: string }> {
    const res = await fetch(`http://${extproc.adminAddress}/ready`);
    return { status: res.status, body: await res.text() };
  }

  test('not ready while the control plane is unreachable or not serving; ready by itself once it answers', async () => {
    const port = await freePort();
    const { values } = readFlags(
      EXTPROC_FLAGS,
      ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', `127.0.0.1:${port}`, '--health-check-interval-ms', '100', '--health-check-timeout-ms', '500'],
      {},
    );
    const extproc = await startExtproc(buildConfig(values), pino({ level: 'silent' }));
    cleanups.push(() => extproc.close());
    const health = createHealthClient(extproc.grpcAddress);
    cleanups.push(() => health.close());

    const down = await readyOf(extproc);
    assert.equal(down.status, 503);
    assert.match(down.body, new RegExp(`^NOT_READY\\ncontrol plane 127\\.0\\.0\\.1:${port}: unreachable \\(.+\\) \\(for \\d+\\.\\d s\\)\\n$`));
    assert.equal((await fetch(`http://${extproc.adminAddress}/live`)).status, 200);
    assert.deepEqual(await checkHealth(health, '', 1000).answer, { kind: 'serving' }, 'the server itself serves');
    assert.deepEqual(await checkHealth(health, 'envoy.service.ext_proc.v3.ExternalProcessor', 1000).answer, { kind: 'not-serving', status: 'NOT_SERVING' });
    assert.deepEqual(await checkHealth(health, 'some.Other', 1000).answer, { kind: 'unknown-service' });
    assert.match(await (await fetch(`http://${extproc.adminAddress}/metrics`)).text(), /^actor_edge_extproc_ready 0$/m);

    // The control plane comes up on its address.
    let status: ServingStatus = 'SERVING';
    const control = new grpc.Server();
    new HealthServer((service) => (service === 'ateapi.Control' ? status : undefined)).addTo(control);
    await new Promise<void>((resolve, reject) => control.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    cleanups.push(() => control.forceShutdown());
    await waitFor(async () => (await readyOf(extproc)).status === 200, 10_000, 'extproc to become ready');
    assert.equal((await readyOf(extproc)).body, 'LIVE\n');
    assert.deepEqual(await checkHealth(health, 'envoy.service.ext_proc.v3.ExternalProcessor', 1000).answer, { kind: 'serving' });
    const metrics = await (await fetch(`http://${extproc.adminAddress}/metrics`)).text();
    assert.match(metrics, /^actor_edge_extproc_ready 1$/m);
    assert.match(metrics, /^actor_edge_extproc_control_plane_health_checks_total\{result="ok"\} [1-9]\d*$/m);

    // It says it is not serving (an outage).
    status = 'NOT_SERVING';
    await waitFor(async () => (await readyOf(extproc)).status === 503, 10_000, 'extproc to fail readiness');
    assert.match((await readyOf(extproc)).body, new RegExp(`control plane 127\\.0\\.0\\.1:${port}: reports NOT_SERVING`));
    assert.deepEqual(await checkHealth(health, '', 1000).answer, { kind: 'serving' }, 'the server stays up');
    status = 'SERVING';
    await waitFor(async () => (await readyOf(extproc)).status === 200, 10_000, 'extproc to recover');
  });
});
