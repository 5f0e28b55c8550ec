/** The gRPC health protocol on both sides, over real loopback servers; and the periodic probe built on it. */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { freePort } from './loopback.js';
import { waitFor } from './testing/wait.js';
import { checkHealth, createHealthClient, healthServiceDefinition, HealthServer, judgeAnswer, type ServingStatus } from './grpc-health.js';
import { HealthProbe, type CheckState } from './health-probe.js';
import { controlService } from './resume/control-client.js';

const servers: grpc.Server[] = [];
describe('grpc-health', () => {
  after(() => {
    for (const s of servers) s.forceShutdown();
  });

  async function serve(setup: (server: grpc.Server) => void, port = 0): Promise<string> {
    const server = new grpc.Server();
    setup(server);
    servers.push(server);
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    return `127.0.0.1:${bound}`;
  }

  test('Check: a known service gets its status, an unknown one NOT_FOUND; a server without the service UNIMPLEMENTED; nothing listening UNAVAILABLE; a server that never answers, no answer in time', async () => {
    let status: ServingStatus = 'SERVING';
    const health = new HealthServer((service) => (service === '' || service === 'a.B' ? status : undefined));
    const address = await serve((s) => health.addTo(s));
    const client = createHealthClient(address);
    assert.deepEqual(await checkHealth(client, '', 1000).answer, { kind: 'serving' });
    assert.deepEqual(await checkHealth(client, 'a.B', 1000).answer, { kind: 'serving' });
    status = 'NOT_SERVING';
    assert.deepEqual(await checkHealth(client, 'a.B', 1000).answer, { kind: 'not-serving', status: 'NOT_SERVING' });
    assert.deepEqual(await checkHealth(client, 'x.Y', 1000).answer, { kind: 'unknown-service' });
    client.close();

    const noHealth = createHealthClient(await serve((s) => s.addService(controlService().service, {})));
    assert.deepEqual(await checkHealth(noHealth, '', 1000).answer, { kind: 'no-health-service' });
    noHealth.close();

    const nobody = createHealthClient(`127.0.0.1:${await freePort()}`);
    const refused = await checkHealth(nobody, '', 1000).answer;
    assert.equal(refused.kind, 'failed');
    assert.equal(refused.kind === 'failed' && refused.code, 'UNAVAILABLE');
    assert.match(judgeAnswer(refused).ok ? '' : (judgeAnswer(refused) as { why: string }).why, /^unreachable \(/);
    nobody.close();

    const silent = createHealthClient(await serve((s) => s.addService(healthServiceDefinition(), { Check: () => undefined, Watch: () => undefined })));
    assert.deepEqual(await checkHealth(silent, '', 200).answer, { kind: 'no-answer', timeoutMs: 200 });
    assert.deepEqual(judgeAnswer({ kind: 'no-answer', timeoutMs: 200 }), { ok: false, why: 'no answer to a health check within 200 ms' });
    silent.close();

    // A client already closed (a check racing its component's stop): an answer, not a rejection.
    const closed = createHealthClient(address);
    closed.close();
    const late = await checkHealth(closed, '', 1000).answer;
    assert.equal(late.kind, 'failed');
    assert.deepEqual(late.kind === 'failed' && [late.code, late.details], ['CANCELLED', 'Channel has been shut down']);
  });

  test('Watch sends the status at once and again when it changes; close() ends the watches', async () => {
    let status: ServingStatus = 'SERVING';
    const health = new HealthServer((service) => (service === '' ? status : undefined));
    const address = await serve((s) => health.addTo(s));
    const client = createHealthClient(address) as unknown as grpc.Client & { Watch(req: { service: string }): grpc.ClientReadableStream<{ status: string }> };
    const seen: string[] = [];
    const call = client.Watch({ service: '' });
    const ended = new Promise<void>((resolve) => call.on('status', () => resolve()));
    call.on('data', (m: { status: string }) => seen.push(m.status));
    call.on('error', () => undefined);
    await waitFor(() => seen.length === 1, 5000, 'the first status');
    status = 'NOT_SERVING';
    await waitFor(() => seen.length === 2, 5000, 'the change');
    assert.deepEqual(seen, ['SERVING', 'NOT_SERVING']);
    health.close();
    await ended;
    const unknown = client.Watch({ service: 'nope' });
    const first = await new Promise<string>((resolve) => unknown.on('data', (m: { status: string }) => resolve(m.status)));
    assert.equal(first, 'SERVICE_UNKNOWN');
    unknown.cancel();
    unknown.on('error', () => undefined);
    client.close();
  });

  test('the probe: its first answer decides; two failures in a row make it failing (with the reason and since when); one answer makes it ok again', async () => {
    let status: ServingStatus = 'NOT_SERVING';
    /** Answers NOT_SERVING this many times, whatever `status` says. */
    let failNext = 0;
    const port = await freePort();
    const health = new HealthServer(() => {
      if (failNext > 0) {
        failNext--;
        return 'NOT_SERVING';
      }
      return status;
    });
    await serve((s) => health.addTo(s), port);
    const changes: CheckState['kind'][] = [];
    const probe = new HealthProbe({
      name: `dependency 127.0.0.1:${port}`,
      client: createHealthClient(`127.0.0.1:${port}`),
      service: '',
      intervalMs: 50,
      timeoutMs: 1000,
      onChange: (s) => changes.push(s.kind),
    });
    assert.equal(probe.state().kind, 'pending');
    probe.start();
    await probe.settled(5000);
    const first = probe.state();
    assert.equal(first.kind, 'failing', 'the first answer decides at once');
    assert.equal(first.kind === 'failing' && first.reason, `dependency 127.0.0.1:${port}: reports NOT_SERVING`);
    status = 'SERVING';
    await waitFor(() => probe.state().kind === 'ok', 5000, 'one good answer');
    // One failure after ok is not enough (a slow answer on a busy machine is not an outage).
    const failedBefore = probe.counts.failed;
    failNext = 1;
    await waitFor(() => probe.counts.failed === failedBefore + 1, 5000, 'the single failure');
    const okAfter = probe.counts.ok;
    await waitFor(() => probe.counts.ok > okAfter, 5000, 'the next good answer');
    assert.deepEqual(changes, ['failing', 'ok'], 'one failure changed nothing');
    // Two in a row are.
    status = 'NOT_SERVING';
    await waitFor(() => probe.state().kind === 'failing', 5000, 'two failures in a row');
    const failing = probe.state();
    assert.ok(failing.kind === 'failing' && failing.since <= Date.now() && failing.reason.endsWith('reports NOT_SERVING'));
    status = 'SERVING';
    await waitFor(() => probe.state().kind === 'ok', 5000, 'recovery');
    assert.deepEqual(changes, ['failing', 'ok', 'failing', 'ok']);
    probe.stop();
    const stoppedAt = probe.counts.ok + probe.counts.failed;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(probe.counts.ok + probe.counts.failed, stoppedAt, 'a stopped probe checks no more');
  });
});
